import * as models from "kubernetes-models";

type ModelClass = new (data: unknown) => { validate(): void };

/** `networking.k8s.io/v1` → the package's `networkingK8sIo.v1` namespace; `v1` → `v1`. */
function modelFor(apiVersion: string, kind: string): ModelClass | undefined {
  const [group, version] = apiVersion.includes("/") ? (apiVersion.split("/") as [string, string]) : ["", apiVersion];
  const key = group ? group.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase()) : version;
  const namespace = (models as Record<string, Record<string, unknown>>)[key];
  const versioned = (group ? namespace?.[version] : namespace) as Record<string, unknown> | undefined;
  return versioned?.[kind] as ModelClass | undefined;
}

/**
 * Validates an object against the Kubernetes OpenAPI schema of its apiVersion and kind (the
 * `kubernetes-models` package, generated from the upstream schemas). Throws naming what is wrong;
 * an apiVersion/kind the package does not know is an error too.
 */
export function validateKubeObject(object: { apiVersion?: string; kind?: string }): void {
  if (!object.apiVersion || !object.kind) throw new Error("object without apiVersion or kind");
  const Model = modelFor(object.apiVersion, object.kind);
  if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new Model(object).validate();
}

interface Container {
  name: string;
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    privileged?: boolean;
    runAsNonRoot?: boolean;
    runAsUser?: number;
    capabilities?: { add?: string[]; drop?: string[] };
    seccompProfile?: { type?: string };
  };
}

interface PodSpec {
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type?: string } };
  containers: Container[];
  initContainers?: Container[];
  volumes?: Record<string, unknown>[];
}

const ALLOWED_VOLUMES = new Set([
  "name",
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);

/**
 * The checks of the Pod Security Standards' *restricted* profile (as the admission controller
 * applies them at `enforce: restricted`); returns each violation, empty when the spec passes.
 */
export function restrictedViolations(spec: PodSpec): string[] {
  const out: string[] = [];
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) out.push("host namespaces");
  for (const volume of spec.volumes ?? []) {
    for (const key of Object.keys(volume)) if (!ALLOWED_VOLUMES.has(key)) out.push(`volume type ${key}`);
  }
  const podSeccomp = spec.securityContext?.seccompProfile?.type;
  const podNonRoot = spec.securityContext?.runAsNonRoot;
  for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
    const sc = c.securityContext ?? {};
    if (sc.privileged) out.push(`${c.name}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${c.name}: allowPrivilegeEscalation != false`);
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) out.push(`${c.name}: capabilities.drop lacks ALL`);
    for (const cap of sc.capabilities?.add ?? []) if (cap !== "NET_BIND_SERVICE") out.push(`${c.name}: adds ${cap}`);
    if ((sc.runAsNonRoot ?? podNonRoot) !== true) out.push(`${c.name}: runAsNonRoot != true`);
    if ((sc.runAsUser ?? spec.securityContext?.runAsUser) === 0) out.push(`${c.name}: runAsUser 0`);
    const seccomp = sc.seccompProfile?.type ?? podSeccomp;
    if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") out.push(`${c.name}: seccomp ${seccomp ?? "unset"}`);
  }
  return out;
}
