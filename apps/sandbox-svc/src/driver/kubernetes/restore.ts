import { randomBytes } from "node:crypto";
import type { KubeConfig, V1Container, V1Pod } from "@kubernetes/client-node";
import { capture, MESSAGE_OUTPUT_CAP } from "../../exec/run-command.ts";
import { PREVIOUS_PREFIX, RESTORE_PREFIX, SWAP_SCRIPT } from "../workspace-swap.ts";
import { CONTAINER, WORKSPACE } from "./objects.ts";
import { podExec } from "./streams.ts";

/** The init container that holds a Pod back until its workspace archive is unpacked. */
export const RESTORE_CONTAINER = "restore";

/** Created by the unpack once it succeeded: per Pod (its uid), so one left behind never releases another Pod. */
const MARKER_PREFIX = ".agentplane-restored-";

/**
 * Run in the restore step with the swap's names and the marker as `$1`…`$3` and the archive on
 * stdin: the swap every driver does (workspace-swap.ts), unpacked beside the workspace's content,
 * so a broken archive leaves the workspace as it was and tar never sets the mode or times of the
 * volume's root (owned by root, writable through fsGroup: tar's `./` entry would fail there as a
 * non-root user), then swapped in by renames; what a restore killed in the middle left is settled
 * first. The marker is written once the swap is done. Before that, the unpack went into
 * `$MARKER.tar.gz` and `$MARKER.d`: ones a kill left are removed (never the workspace's content).
 */
const UNPACK = `chmod -R u+w ./${MARKER_PREFIX}*.d 2>/dev/null; rm -rf ./${MARKER_PREFIX}*.tar.gz ./${MARKER_PREFIX}*.d
${SWAP_SCRIPT}`;

/**
 * A sandbox Pod whose workspace is replaced by an archive before its main process starts: an init
 * container `restore` (the sandbox's own image, limits and restricted security context, the
 * workspace mounted, no Secret) waits in the workspace for a marker named by the Pod's uid. The
 * driver streams the archive into that container over `pods/exec` (which reaches a running init
 * container as it does any other), where it is unpacked and replaces the workspace's content
 * (UNPACK) and the marker is written; the init container removes it and ends, and only then does the kubelet start the
 * sandbox's container. Nothing beyond what a sandbox already has is needed: no privileges, no
 * network path from the Pod to the platform, no second image. A wait longer than `waitSeconds`
 * (the driver's start timeout) ends it with an error, failing the Pod.
 */
export function withRestoreStep(pod: V1Pod, waitSeconds: number): V1Pod {
  const main = pod.spec?.containers.find((c) => c.name === CONTAINER) as V1Container;
  // Polled in the container (the kubelet offers no way to wake it); 0.2 s where `sleep` takes fractions.
  const rounds = Math.max(1, Math.ceil(waitSeconds * 5));
  const script = [
    `m="${MARKER_PREFIX}$POD_UID"; n=0`,
    'until [ -e "$m" ]; do',
    "  n=$((n+1))",
    `  if [ "$n" -gt ${rounds} ]; then echo "no workspace archive arrived within ${waitSeconds} s" >&2; exit 1; fi`,
    "  sleep 0.2 2>/dev/null || sleep 1",
    "done",
    'rm -f "$m"',
  ].join("\n");
  const init: V1Container = {
    name: RESTORE_CONTAINER,
    image: main.image as string,
    ...(main.imagePullPolicy ? { imagePullPolicy: main.imagePullPolicy } : {}),
    command: ["sh", "-c", script],
    env: [{ name: "POD_UID", valueFrom: { fieldRef: { fieldPath: "metadata.uid" } } }],
    workingDir: WORKSPACE,
    ...(main.resources ? { resources: main.resources } : {}),
    ...(main.securityContext ? { securityContext: main.securityContext } : {}),
    volumeMounts: main.volumeMounts?.filter((m) => m.mountPath === WORKSPACE) ?? [],
    terminationMessagePolicy: "FallbackToLogsOnError",
  };
  return { ...pod, spec: { ...pod.spec, containers: pod.spec?.containers ?? [], initContainers: [init] } };
}

/** Whether the Pod's restore step runs now, waiting for its archive. */
export function restoreWaiting(pod: V1Pod): boolean {
  const status = pod.status?.initContainerStatuses?.find((s) => s.name === RESTORE_CONTAINER);
  return Boolean(status?.state?.running) && !pod.metadata?.deletionTimestamp;
}

/** Whether the Pod was made with a restore step (a Pod without one never restores). */
export function hasRestoreStep(pod: V1Pod): boolean {
  return (pod.spec?.initContainers ?? []).some((c) => c.name === RESTORE_CONTAINER);
}

/**
 * Streams a gzipped tar into the Pod's waiting restore step: unpacked, the workspace's content
 * replaced by it, then the marker releases the step. Throws with tar's message when the unpack
 * fails (the step keeps waiting, the sandbox's container never starts).
 */
export async function unpackIntoRestoreStep(
  kc: KubeConfig,
  namespace: string,
  pod: V1Pod,
  archive: Uint8Array,
): Promise<void> {
  const marker = `${MARKER_PREFIX}${pod.metadata?.uid}`;
  const id = randomBytes(6).toString("hex");
  const proc = await podExec(
    kc,
    namespace,
    pod.metadata?.name as string,
    { argv: ["sh", "-c", UNPACK, "sh", `${RESTORE_PREFIX}${id}`, `${PREVIOUS_PREFIX}${id}`, marker] },
    RESTORE_CONTAINER,
  );
  // The image's sh and tar say what failed: its first bytes are all a message needs.
  const stderr = capture(proc.stderr, MESSAGE_OUTPUT_CAP);
  proc.stdout.resume();
  proc.stdin.end(Buffer.from(archive));
  const exit = await proc.exited;
  if (exit.exitCode !== 0) {
    const message = stderr.result().text.trim().slice(0, 500);
    throw new Error(`workspace restore failed (exit ${exit.exitCode})${message ? `: ${message}` : ""}`);
  }
}
