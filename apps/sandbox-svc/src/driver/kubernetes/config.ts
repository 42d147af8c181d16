import { ConfigError, envBoolean } from "@agentplane/service-kit";
import { z } from "zod";
import { EgressCredentialKeySchema, egressCredentialKeyFrom } from "./egress-credential.ts";
import { type KubernetesPlacement, normalizeRegistry } from "./objects.ts";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const REGISTRY = "[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\\d{1,5})?";
const REGISTRY_LIST = new RegExp(`^\\s*${REGISTRY}(\\s*,\\s*${REGISTRY})*\\s*$`);

function jsonSetting<T extends z.ZodType>(schema: T, example: string) {
  return z.string().transform((s, ctx): z.infer<T> => {
    try {
      return schema.parse(JSON.parse(s));
    } catch {
      ctx.addIssue({ code: "custom", message: `JSON such as ${example}` });
      return z.NEVER;
    }
  });
}

const TolerationSchema = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: z.string().optional(),
  effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
  tolerationSeconds: z.number().int().optional(),
});

/**
 * The image a sandbox naming `default` runs where SANDBOX_K8S_DEFAULT_IMAGE is unset: a point
 * release, never a floating tag, so sandboxes of one version start from the same system. The chart
 * sets the same one (deploy/helm/agentplane/values.yaml).
 */
export const DEFAULT_SANDBOX_IMAGE = "docker.io/library/debian:12.12-slim";

/** The `kubernetes` driver's settings (`SANDBOX_K8S_*`); the API server comes from in-cluster config or KUBECONFIG. */
export const KubernetesSettingsSchema = z.object({
  /** Namespace of the sandbox Pods, claims and NetworkPolicies (the chart creates it with its Role). */
  SANDBOX_K8S_NAMESPACE: z.string().regex(DNS_LABEL).optional(),
  /** OCI reference the platform's `default` image stands for. */
  SANDBOX_K8S_DEFAULT_IMAGE: z.string().min(1).optional(),
  SANDBOX_K8S_SERVICE_ACCOUNT: z.string().regex(DNS_LABEL).optional(),
  /** e.g. `gvisor` for a RuntimeClass with a sandboxing runtime. */
  SANDBOX_K8S_RUNTIME_CLASS: z.string().regex(DNS_LABEL).optional(),
  SANDBOX_K8S_NODE_SELECTOR_JSON: jsonSetting(
    z.record(z.string(), z.string()),
    '{"agentplane.dev/pool":"sandboxes"}',
  ).optional(),
  SANDBOX_K8S_TOLERATIONS_JSON: jsonSetting(
    z.array(TolerationSchema),
    '[{"key":"sandboxes","operator":"Exists","effect":"NoSchedule"}]',
  ).optional(),
  SANDBOX_K8S_STORAGE_CLASS: z.string().min(1).optional(),
  /** VolumeSnapshotClass of workspace snapshots (the cluster's default class when unset; none: tar over exec). */
  SANDBOX_K8S_SNAPSHOT_CLASS: z.string().min(1).optional(),
  SANDBOX_K8S_WORKSPACE_SIZE: z
    .string()
    .regex(/^\d+(Ki|Mi|Gi|Ti)$/)
    .optional(),
  SANDBOX_K8S_START_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).optional(),
  /** `true` when sandbox-svc runs in the cluster: ports are dialled on the Pod's IP, not through pods/portforward. */
  SANDBOX_K8S_DIAL_POD_IP: envBoolean.optional(),
  /** On: sandbox containers get a read-only root filesystem, `/tmp` an emptyDir (off by default: images expect to write). */
  SANDBOX_K8S_READ_ONLY_ROOT: envBoolean.optional(),
  /** `<namespace>/<label>=<value>[,…]:<port>` of the egress proxy's Pods, the only egress sandboxes get. */
  SANDBOX_K8S_EGRESS_PROXY: z
    .string()
    .regex(/^[a-z0-9-]+\/[^:]+:\d{1,5}$/)
    .optional(),
  /** The egress proxy's Service as sandboxes dial it (`http://agentplane-egress.agentplane.svc:3128`). */
  SANDBOX_K8S_EGRESS_PROXY_URL: z
    .url()
    .regex(/^http:\/\/[^/@]+:\d{1,5}\/?$/, "http://<host>:<port>")
    .optional(),
  /** Shared with the egress proxy: each sandbox's proxy credential is an HMAC under it. */
  SANDBOX_EGRESS_CREDENTIAL_KEY: EgressCredentialKeySchema.optional(),
  /** Where SANDBOX_EGRESS_CREDENTIAL_KEY is unset, the credential key is derived from it. */
  AGENTPLANE_SECRET_KEY: z.string().min(16).optional(),
  /**
   * Registries (`host[:port]`, comma-separated) sandbox images may come from, `docker.io` standing for
   * a reference that names none; any when unset. The node pulls with its own registry credentials.
   */
  SANDBOX_K8S_IMAGE_REGISTRIES: z
    .string()
    .regex(REGISTRY_LIST, "registry hosts such as docker.io,ghcr.io,registry.example.com:5000")
    .transform((s) => s.split(",").map((r) => normalizeRegistry(r.trim())))
    .optional(),
  /** `<namespace>/<label>=<value>[,…]` of sandbox-svc's Pods, the only ones that may connect to a sandbox. */
  SANDBOX_K8S_PLATFORM_PODS: z
    .string()
    .regex(/^[a-z0-9-]+\/.+$/)
    .optional(),
});
export type KubernetesSettings = z.infer<typeof KubernetesSettingsSchema>;

export interface KubernetesConfig {
  placement: KubernetesPlacement;
  /** The key of the per-sandbox egress credentials, base64 (with an egress proxy URL). */
  egressCredentialKey?: string;
  startTimeoutMs: number;
  dialPodIP: boolean;
}

function podsRef(value: string): { namespace: string; labels: Record<string, string> } {
  const slash = value.indexOf("/");
  const namespace = value.slice(0, slash);
  const selector = value.slice(slash + 1);
  const labels = Object.fromEntries(selector.split(",").map((kv) => kv.split("=", 2) as [string, string]));
  return { namespace, labels };
}

export function kubernetesConfigFrom(settings: KubernetesSettings): KubernetesConfig {
  const egress = settings.SANDBOX_K8S_EGRESS_PROXY;
  const egressUrl = settings.SANDBOX_K8S_EGRESS_PROXY_URL;
  const credentialKey =
    settings.SANDBOX_EGRESS_CREDENTIAL_KEY ??
    (settings.AGENTPLANE_SECRET_KEY ? egressCredentialKeyFrom(settings.AGENTPLANE_SECRET_KEY) : undefined);
  if (egressUrl && !credentialKey) {
    throw new ConfigError([
      {
        name: "SANDBOX_EGRESS_CREDENTIAL_KEY",
        message:
          "required with SANDBOX_K8S_EGRESS_PROXY_URL: the key of sandboxes' egress credentials, the egress proxy's too (derived from AGENTPLANE_SECRET_KEY where that is set)",
      },
    ]);
  }
  if (egressUrl && !egress) {
    throw new ConfigError([
      {
        name: "SANDBOX_K8S_EGRESS_PROXY",
        message: "required with SANDBOX_K8S_EGRESS_PROXY_URL (the NetworkPolicy's peer)",
      },
    ]);
  }
  return {
    ...(egressUrl ? { egressCredentialKey: credentialKey as string } : {}),
    placement: {
      namespace: settings.SANDBOX_K8S_NAMESPACE ?? "agentplane-sandboxes",
      defaultImage: settings.SANDBOX_K8S_DEFAULT_IMAGE ?? DEFAULT_SANDBOX_IMAGE,
      serviceAccountName: settings.SANDBOX_K8S_SERVICE_ACCOUNT ?? "agentplane-sandbox",
      workspaceSize: settings.SANDBOX_K8S_WORKSPACE_SIZE ?? "10Gi",
      defaults: { cpuMillicores: 1000, memoryMiB: 2048, ephemeralMiB: 4096 },
      ...(settings.SANDBOX_K8S_RUNTIME_CLASS ? { runtimeClassName: settings.SANDBOX_K8S_RUNTIME_CLASS } : {}),
      ...(settings.SANDBOX_K8S_NODE_SELECTOR_JSON ? { nodeSelector: settings.SANDBOX_K8S_NODE_SELECTOR_JSON } : {}),
      ...(settings.SANDBOX_K8S_TOLERATIONS_JSON ? { tolerations: settings.SANDBOX_K8S_TOLERATIONS_JSON } : {}),
      ...(settings.SANDBOX_K8S_STORAGE_CLASS ? { storageClassName: settings.SANDBOX_K8S_STORAGE_CLASS } : {}),
      ...(settings.SANDBOX_K8S_SNAPSHOT_CLASS ? { snapshotClassName: settings.SANDBOX_K8S_SNAPSHOT_CLASS } : {}),
      ...(egress
        ? {
            egressProxy: {
              ...podsRef(egress.slice(0, egress.lastIndexOf(":"))),
              port: Number(egress.slice(egress.lastIndexOf(":") + 1)),
            },
          }
        : {}),
      ...(settings.SANDBOX_K8S_PLATFORM_PODS ? { platform: podsRef(settings.SANDBOX_K8S_PLATFORM_PODS) } : {}),
      ...(settings.SANDBOX_K8S_IMAGE_REGISTRIES ? { imageRegistries: settings.SANDBOX_K8S_IMAGE_REGISTRIES } : {}),
      ...(egressUrl ? { egressProxyUrl: egressUrl } : {}),
      ...(settings.SANDBOX_K8S_READ_ONLY_ROOT ? { readOnlyRoot: true } : {}),
    },
    startTimeoutMs: (settings.SANDBOX_K8S_START_TIMEOUT_SECONDS ?? 300) * 1000,
    dialPodIP: settings.SANDBOX_K8S_DIAL_POD_IP ?? false,
  };
}
