import type { V1NetworkPolicy, V1PersistentVolumeClaim, V1Pod, V1Secret, V1Toleration } from "@kubernetes/client-node";
import type { SandboxRuntimeSpec } from "../types.ts";

/** The label every object of the driver carries; its informer watches exactly these. */
export const MANAGED_BY = "app.kubernetes.io/managed-by";
export const COMPONENT = "app.kubernetes.io/component";
export const SANDBOX_ID = "agentplane.dev/sandbox-id";
export const ORG_ID = "agentplane.dev/org-id";
export const PROJECT_ID = "agentplane.dev/project-id";
export const DRIVER_SELECTOR = `${MANAGED_BY}=agentplane,${COMPONENT}=sandbox`;

export const CONTAINER = "sandbox";
export const WORKSPACE = "/workspace";
/** Where a sandbox with a read-only root filesystem may write besides its workspace (an emptyDir). */
export const SCRATCH = "/tmp";
const SANDBOX_UID = 1000;

/** Where and how sandbox Pods run: from configuration (`SANDBOX_K8S_*`). */
export interface KubernetesPlacement {
  namespace: string;
  /** OCI reference used for the platform's `default` image. */
  defaultImage: string;
  /** A service account with no permissions (its token is not mounted anyway). */
  serviceAccountName: string;
  runtimeClassName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
  storageClassName?: string;
  /** VolumeSnapshotClass for workspace snapshots; the cluster's default class when unset. */
  snapshotClassName?: string;
  /** Workspace claim size when the sandbox sets no `diskMiB`. */
  workspaceSize: string;
  /** Limits applied where the sandbox sets none (the restricted profile wants every one bounded). */
  defaults: { cpuMillicores: number; memoryMiB: number; ephemeralMiB: number };
  /** Labels of the egress proxy's Pods (in `egressNamespace`): the only egress a sandbox has. */
  egressProxy?: { namespace: string; labels: Record<string, string>; port: number };
  /** The egress proxy's address as sandboxes dial it (its Service); they get it with their credential. */
  egressProxyUrl?: string;
  /** Labels of sandbox-svc's Pods (in `platformNamespace`): the only ones that may connect in. */
  platform?: { namespace: string; labels: Record<string, string> };
  /** Registries (`host[:port]`) sandbox images may come from; any when unset. */
  imageRegistries?: string[];
  /**
   * A read-only root filesystem for the sandbox's container (and its restore step): writable are
   * only the workspace and an emptyDir at SCRATCH bounded as the ephemeral storage is.
   */
  readOnlyRoot?: boolean;
}

export function claimName(slug: string): string {
  return `${slug}-workspace`;
}

/** The Secret holding a sandbox's environment (its token, its egress credential, its own variables). */
export function envSecretName(slug: string): string {
  return `${slug}-env`;
}

/** Set for every sandbox unless its own env says otherwise. */
function baseEnv(): Record<string, string> {
  return { HOME: WORKSPACE, USER: "sandbox", LANG: "C.UTF-8" };
}

/** The proxy variables tools read (curl, pip, npm, git…): everything but the sandbox itself goes through it. */
export function proxyEnv(proxyUrl: string, slug: string): Record<string, string> {
  const noProxy = `localhost,127.0.0.1,::1,${slug}`;
  return {
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    NO_PROXY: noProxy,
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    no_proxy: noProxy,
  };
}

/** Valid label values only: ids are `[a-z0-9_]`, an org may be absent. */
export function sandboxLabels(spec: Pick<SandboxRuntimeSpec, "id" | "orgId" | "projectId">): Record<string, string> {
  return {
    [MANAGED_BY]: "agentplane",
    [COMPONENT]: "sandbox",
    [SANDBOX_ID]: spec.id,
    ...(spec.orgId ? { [ORG_ID]: spec.orgId } : {}),
    ...(spec.projectId ? { [PROJECT_ID]: spec.projectId } : {}),
  };
}

/** Docker Hub's other names are Docker Hub. */
export function normalizeRegistry(host: string): string {
  return host === "index.docker.io" || host === "registry-1.docker.io" ? "docker.io" : host;
}

/** The registry (`host[:port]`) of an OCI reference: its first component when it names a host, else Docker Hub. */
export function imageRegistry(image: string): string {
  const slash = image.indexOf("/");
  const first = slash < 0 ? "" : image.slice(0, slash);
  const isHost = first.includes(".") || first.includes(":") || first === "localhost";
  return isHost ? normalizeRegistry(first) : "docker.io";
}

export function resolveImage(image: string, placement: KubernetesPlacement): string {
  return image === "default" ? placement.defaultImage : image;
}

/**
 * The workspace claim: it outlives the Pod (stop keeps it) and owns the Pod and the NetworkPolicy,
 * so deleting it (sandbox deleted) lets the garbage collector remove everything of the sandbox.
 */
export function workspaceClaim(spec: SandboxRuntimeSpec, placement: KubernetesPlacement): V1PersistentVolumeClaim {
  const size = spec.resources.diskMiB ? `${spec.resources.diskMiB}Mi` : placement.workspaceSize;
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: claimName(spec.slug), namespace: placement.namespace, labels: sandboxLabels(spec) },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: size } },
      ...(placement.storageClassName ? { storageClassName: placement.storageClassName } : {}),
    },
  };
}

function ownedBy(claim: V1PersistentVolumeClaim) {
  return [
    {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      name: claim.metadata?.name as string,
      uid: claim.metadata?.uid as string,
      blockOwnerDeletion: true,
    },
  ];
}

/**
 * One Pod per sandbox, named by its slug, under the *restricted* Pod Security profile: non-root,
 * no privilege escalation, every capability dropped, seccomp RuntimeDefault; no API token mounted;
 * cpu, memory and ephemeral-storage limited. With `readOnlyRoot` the image's filesystem is
 * read-only too, and `/tmp` an emptyDir no larger than the ephemeral-storage limit.
 */
export function sandboxPod(
  spec: SandboxRuntimeSpec,
  placement: KubernetesPlacement,
  claim: V1PersistentVolumeClaim,
): V1Pod {
  const cpu = `${spec.resources.cpuMillicores ?? placement.defaults.cpuMillicores}m`;
  const memory = `${spec.resources.memoryMiB ?? placement.defaults.memoryMiB}Mi`;
  const ephemeral = `${placement.defaults.ephemeralMiB}Mi`;
  const limits = { cpu, memory, "ephemeral-storage": ephemeral };
  // The sandbox's own variables (its platform token among them) come from its Secret: a Pod spec is
  // readable by anyone who may list Pods, a Secret only by who may read Secrets.
  const env = Object.entries(baseEnv()).filter(([name]) => !(name in spec.env));
  const readOnly = placement.readOnlyRoot === true;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: spec.slug,
      namespace: placement.namespace,
      labels: sandboxLabels(spec),
      ownerReferences: ownedBy(claim),
    },
    spec: {
      restartPolicy: "Never",
      hostname: spec.slug,
      serviceAccountName: placement.serviceAccountName,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      ...(placement.runtimeClassName ? { runtimeClassName: placement.runtimeClassName } : {}),
      ...(placement.nodeSelector ? { nodeSelector: placement.nodeSelector } : {}),
      ...(placement.tolerations ? { tolerations: placement.tolerations } : {}),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: SANDBOX_UID,
        runAsGroup: SANDBOX_UID,
        fsGroup: SANDBOX_UID,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: CONTAINER,
          image: resolveImage(spec.image, placement),
          // Checked with the registry at every start: an image the node holds (pulled with another
          // workload's credentials) is never run for a sandbox that could not pull it itself.
          imagePullPolicy: "Always",
          command: spec.command && spec.command.length > 0 ? spec.command : ["sleep", "infinity"],
          env: env.map(([name, value]) => ({ name, value })),
          envFrom: [{ secretRef: { name: envSecretName(spec.slug) } }],
          workingDir: WORKSPACE,
          resources: { requests: limits, limits },
          securityContext: {
            runAsNonRoot: true,
            allowPrivilegeEscalation: false,
            privileged: false,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
            ...(readOnly ? { readOnlyRootFilesystem: true } : {}),
          },
          volumeMounts: [
            { name: "workspace", mountPath: WORKSPACE },
            ...(readOnly ? [{ name: "tmp", mountPath: SCRATCH }] : []),
          ],
        },
      ],
      volumes: [
        { name: "workspace", persistentVolumeClaim: { claimName: claim.metadata?.name as string } },
        ...(readOnly ? [{ name: "tmp", emptyDir: { sizeLimit: ephemeral } }] : []),
      ],
    },
  };
}

/**
 * The sandbox's environment as a Secret, owned by its claim: its own variables and, with an egress
 * proxy, the proxy variables carrying its per-sandbox credential. Rewritten at each start (the
 * platform token is new each time).
 */
export function sandboxEnvSecret(
  spec: SandboxRuntimeSpec,
  placement: KubernetesPlacement,
  claim: V1PersistentVolumeClaim,
  egress: Record<string, string>,
): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: envSecretName(spec.slug),
      namespace: placement.namespace,
      labels: sandboxLabels(spec),
      ownerReferences: ownedBy(claim),
    },
    stringData: { ...spec.env, ...egress },
  };
}

/**
 * The sandbox's own NetworkPolicy: in, only from sandbox-svc (ports reached through the Pod's IP);
 * out, only to the egress proxy (so the cloud metadata address and everything else is unreachable).
 * Without an egress proxy configured the sandbox has no egress at all.
 */
export function sandboxNetworkPolicy(
  spec: SandboxRuntimeSpec,
  placement: KubernetesPlacement,
  claim: V1PersistentVolumeClaim,
): V1NetworkPolicy {
  const nsSelector = (ns: string) => ({ matchLabels: { "kubernetes.io/metadata.name": ns } });
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name: spec.slug,
      namespace: placement.namespace,
      labels: sandboxLabels(spec),
      ownerReferences: ownedBy(claim),
    },
    spec: {
      podSelector: { matchLabels: { [SANDBOX_ID]: spec.id } },
      policyTypes: ["Ingress", "Egress"],
      ingress: placement.platform
        ? [
            {
              _from: [
                {
                  namespaceSelector: nsSelector(placement.platform.namespace),
                  podSelector: { matchLabels: placement.platform.labels },
                },
              ],
            },
          ]
        : [],
      egress: placement.egressProxy
        ? [
            {
              to: [
                {
                  namespaceSelector: nsSelector(placement.egressProxy.namespace),
                  podSelector: { matchLabels: placement.egressProxy.labels },
                },
              ],
              ports: [{ protocol: "TCP", port: placement.egressProxy.port }],
            },
          ]
        : [],
    },
  };
}
