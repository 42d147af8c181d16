import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SandboxRuntimeSpec } from "../types.ts";
import { DEFAULT_IMAGE, imageMountArgs } from "./images.ts";

export const SANDBOX_UID = "1000";
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * What bwrap binds into a sandbox: its workspace, its run dir (passwd, group and hosts of the
 * default image) and a registered image's root. On the host, or where bwrap reaches the same
 * (private-mounts.ts).
 */
export interface SandboxPaths {
  workspace: string;
  runDir: string;
  imageRoot?: string | undefined;
}

/**
 * bwrap's arguments for a sandbox: every namespace, the image's root, its own /etc/passwd, group
 * and hosts (default image), a fresh /proc, /dev and /tmp, and the workspace bound at /workspace.
 * The run files are written at `host`; bwrap binds from `seen`.
 */
export function bwrapArgs(
  spec: SandboxRuntimeSpec,
  images: Record<string, string>,
  host: SandboxPaths,
  seen: SandboxPaths = host,
): string[] {
  const { runDir } = host;
  mkdirSync(runDir, { recursive: true });
  writeFileSync(
    join(runDir, "passwd"),
    "root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:1000:1000:sandbox:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
  );
  writeFileSync(join(runDir, "group"), "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n");
  writeFileSync(join(runDir, "hosts"), `127.0.0.1\tlocalhost ${spec.slug}\n::1\tlocalhost\n`);
  const etc =
    spec.image === DEFAULT_IMAGE
      ? ["passwd", "group", "hosts"].flatMap((f) => ["--ro-bind", join(seen.runDir, f), `/etc/${f}`])
      : [];
  return [
    // Every namespace (user, mount, pid, ipc, uts, net, cgroup); no --share-net: only loopback.
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--uid",
    SANDBOX_UID,
    "--gid",
    SANDBOX_UID,
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
    "--hostname",
    spec.slug,
    ...imageMountArgs(spec.image, images, seen.imageRoot),
    ...etc,
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    "/tmp",
    "--dir",
    "/run",
    "--bind",
    seen.workspace,
    "/workspace",
    "--chdir",
    "/workspace",
    "--info-fd",
    "3",
  ];
}

/** `'…'` quoting for one word of a `sh -c` string. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * A terminal inside the sandbox for a TTY exec. The pseudo-terminal the driver opens lives in the
 * host's devpts, which the sandbox's own `/dev` does not show, so `tty` would say "not a tty" and a
 * shell would get no job control. util-linux `script`, started inside the namespaces, opens a
 * terminal from the sandbox's devpts, makes it the command's controlling terminal in a new session,
 * passes window-size changes on and returns the command's exit code (`-e`); the outer terminal is
 * put in raw mode by it, so nothing is echoed twice.
 */
export function withSandboxTerminal(argv: string[]): string[] {
  return ["/usr/bin/script", "-q", "-e", "-c", argv.map(shellQuote).join(" "), "/dev/null"];
}
