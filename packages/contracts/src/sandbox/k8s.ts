// A Kubernetes-API-compatible view of sandboxes under `/k8s`, so that a kubeconfig whose server is
// `<base>/k8s` (namespace = project id, pod = sandbox id, token = an API token) works with the
// WebSocket exec of current Kubernetes clients. Read-only pod views; exec and attach stream.
import { z } from "@hono/zod-openapi";
import { defineRoute } from "../common/route.ts";
import { pathParam } from "../common/schemas.ts";

/** The prefix of the Kubernetes-compatible surface; a kubeconfig's `server` is `<base>/k8s`. */
export const K8S_PREFIX = "/k8s";
/** The one container name a sandbox pod has. */
export const K8S_CONTAINER = "sandbox";

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

const NamespaceParams = z.object({
  projectId: pathParam("projectId", "prj_01j0000000000000000000000").describe("The namespace: a project id"),
});
const PodParams = NamespaceParams.extend({
  sandboxId: pathParam("sandboxId", "sbx_01j0000000000000000000000").describe("The pod name: a sandbox id"),
});

const ObjectMeta = z.object({
  name: z.string().describe("The sandbox id"),
  namespace: z.string().describe("The project id"),
  uid: z.string().describe("The sandbox id, stable for the sandbox's life"),
  creationTimestamp: z.string().describe("When the sandbox was created (RFC 3339)"),
  labels: z.record(z.string(), z.string()).describe("The sandbox's labels"),
  annotations: z.record(z.string(), z.string()).describe("The sandbox's name and slug, under agentplane.dev/"),
});

export const K8sPodSchema = z
  .object({
    apiVersion: z.literal("v1").describe("Always v1"),
    kind: z.literal("Pod").describe("Always Pod"),
    metadata: ObjectMeta.describe("Standard object metadata"),
    spec: z
      .object({
        containers: z
          .array(
            z.object({
              name: z.string().describe("Always `sandbox`"),
              image: z.string().describe("The sandbox image"),
            }),
          )
          .describe("One container: the sandbox"),
      })
      .describe("What the pod runs"),
    status: z
      .object({
        phase: z
          .enum(["Pending", "Running", "Succeeded", "Failed", "Unknown"])
          .describe("The sandbox state as a pod phase"),
        startTime: z.string().optional().describe("When the sandbox last started"),
        message: z.string().optional().describe("The last error, when the sandbox failed"),
      })
      .describe("Where the pod is in its life"),
  })
  .openapi("K8sPod");
export type K8sPod = z.infer<typeof K8sPodSchema>;

export const K8sPodListSchema = z
  .object({
    apiVersion: z.literal("v1").describe("Always v1"),
    kind: z.literal("PodList").describe("Always PodList"),
    metadata: z.object({}).describe("List metadata (empty: no paging)"),
    items: z.array(K8sPodSchema).describe("The project's sandboxes as pods, newest first"),
  })
  .openapi("K8sPodList");

const StreamQuery = z.object({
  command: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe("The command and its arguments, one `command` parameter each (exec only)"),
  container: z.string().optional().describe("Ignored unless given: a sandbox pod has one container, `sandbox`"),
  stdin: z.enum(["true", "false", "1", "0"]).optional().describe("Whether stdin is sent (channel 0)"),
  stdout: z.enum(["true", "false", "1", "0"]).optional().describe("Whether stdout is wanted (channel 1)"),
  stderr: z.enum(["true", "false", "1", "0"]).optional().describe("Whether stderr is wanted (channel 2)"),
  tty: z.enum(["true", "false", "1", "0"]).optional().describe("Run on a terminal inside the sandbox"),
});

/** The aggregated discovery document (`apidiscovery.k8s.io` v2 or v2beta1), as kubectl ≥ 1.30 asks for it first. */
const AggregatedDiscovery = z
  .object({
    kind: z.literal("APIGroupDiscoveryList"),
    apiVersion: z.string().describe("`apidiscovery.k8s.io/v2` or `apidiscovery.k8s.io/v2beta1`, as asked"),
    metadata: z.object({}).describe("Empty"),
    items: z
      .array(z.record(z.string(), z.unknown()))
      .describe("The core group with pods and their exec and attach subresources (`/k8s/api`), none (`/k8s/apis`)"),
  })
  .openapi("K8sAPIGroupDiscoveryList");
const AGGREGATED_NOTE =
  " With `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList` (or `v=v2beta1`) the aggregated discovery document instead, with that media type.";

export const k8sGetApiVersionsRoute = defineRoute(
  { service: "sandbox", access: "authenticated" },
  {
    operationId: "k8sGetApiVersions",
    method: "get",
    path: "/k8s/api",
    tags: ["Kubernetes-compatible sandboxes"],
    summary: "Kubernetes API versions",
    description: `Discovery for Kubernetes clients: the core group at version v1.${AGGREGATED_NOTE}`,
    responses: {
      200: json(
        z.union([
          z.object({ kind: z.literal("APIVersions"), versions: z.array(z.string()).describe('Always `["v1"]`') }),
          AggregatedDiscovery,
        ]),
        "The core API versions",
      ),
    },
  },
);

export const k8sGetApiGroupsRoute = defineRoute(
  { service: "sandbox", access: "authenticated" },
  {
    operationId: "k8sGetApiGroups",
    method: "get",
    path: "/k8s/apis",
    tags: ["Kubernetes-compatible sandboxes"],
    summary: "Kubernetes API groups",
    description: `Discovery for Kubernetes clients: no named API groups (sandboxes are core v1 pods).${AGGREGATED_NOTE}`,
    responses: {
      200: json(
        z.union([
          z.object({
            kind: z.literal("APIGroupList"),
            apiVersion: z.literal("v1").describe("Always v1"),
            groups: z.array(z.unknown()).describe("Always empty"),
          }),
          AggregatedDiscovery,
        ]),
        "The named API groups: none",
      ),
    },
  },
);

export const k8sGetApiResourcesRoute = defineRoute(
  { service: "sandbox", access: "authenticated" },
  {
    operationId: "k8sGetApiResources",
    method: "get",
    path: "/k8s/api/v1",
    tags: ["Kubernetes-compatible sandboxes"],
    summary: "Kubernetes core v1 resources",
    description: "Discovery for Kubernetes clients: pods (get, list) and their exec and attach subresources.",
    responses: {
      200: json(
        z.object({
          kind: z.literal("APIResourceList"),
          apiVersion: z.literal("v1").describe("Always v1"),
          groupVersion: z.literal("v1").describe("Always v1"),
          resources: z
            .array(
              z.object({
                name: z.string().describe("`pods`, `pods/exec` or `pods/attach`"),
                singularName: z.string().describe("`pod` for pods, empty for subresources"),
                shortNames: z.array(z.string()).optional().describe("`po` for pods"),
                categories: z.array(z.string()).optional().describe("`all` for pods"),
                namespaced: z.boolean().describe("Always true"),
                kind: z.string().describe("The kind the resource returns"),
                verbs: z.array(z.string()).describe("What can be done with it"),
              }),
            )
            .describe("The resources served"),
        }),
        "The resources of the core v1 group that sandboxes serve",
      ),
    },
  },
);

export const k8sListPodsRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "k8sListPods",
    method: "get",
    path: "/k8s/api/v1/namespaces/{projectId}/pods",
    tags: ["Kubernetes-compatible sandboxes"],
    summary: "List a project's sandboxes as pods",
    description:
      "A read-only view of the project's sandboxes (newest first) as Kubernetes pods, narrowed by a label selector and a field selector as the Kubernetes API narrows them.",
    request: {
      params: NamespaceParams,
      query: z.object({
        labelSelector: z
          .string()
          .max(4096)
          .optional()
          .describe("Kubernetes label selector: key, !key, key=value, key!=value, key in (a,b), key notin (a,b)")
          .openapi({ example: "team=web,tier in (api,worker)" }),
        fieldSelector: z
          .string()
          .max(4096)
          .optional()
          .describe("Kubernetes field selector over metadata.name, metadata.namespace and status.phase")
          .openapi({ example: "status.phase=Running" }),
      }),
    },
    responses: { 200: json(K8sPodListSchema, "The sandboxes as a PodList") },
  },
);

export const k8sGetPodRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "k8sGetPod",
    method: "get",
    path: "/k8s/api/v1/namespaces/{projectId}/pods/{sandboxId}",
    tags: ["Kubernetes-compatible sandboxes"],
    summary: "Get a sandbox as a pod",
    description: "A read-only view of one sandbox as a Kubernetes pod (kubectl reads it before exec).",
    request: { params: PodParams },
    responses: { 200: json(K8sPodSchema, "The sandbox as a Pod") },
  },
);

export const k8sExecPodRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:exec", websocket: true },
  {
    operationId: "k8sExecPod",
    method: "get",
    path: "/k8s/api/v1/namespaces/{projectId}/pods/{sandboxId}/exec",
    tags: ["Kubernetes-compatible sandboxes"],
    summary: "Exec in a sandbox (Kubernetes clients)",
    description:
      "The pods/exec subresource over WebSocket (`v5.channel.k8s.io`, `v4.channel.k8s.io`), as `kubectl exec` ≥ 1.30, `@kubernetes/client-node`'s Exec and the Python client's `stream` speak it; the same exec, policy and audit as `/v1/projects/{projectId}/sandboxes/{sandboxId}/exec`. SPDY is not served.",
    request: { params: PodParams, query: StreamQuery },
    responses: { 101: { description: "Switching protocols" } },
  },
);

export const k8sAttachPodRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:exec", websocket: true },
  {
    operationId: "k8sAttachPod",
    method: "get",
    path: "/k8s/api/v1/namespaces/{projectId}/pods/{sandboxId}/attach",
    tags: ["Kubernetes-compatible sandboxes"],
    summary: "Attach to a sandbox (Kubernetes clients)",
    description:
      "The pods/attach subresource over WebSocket: a sandbox's main process has no terminal to share, so attaching opens an interactive login shell (`/bin/sh -l`) in the sandbox, on a terminal when `tty=true`.",
    request: { params: PodParams, query: StreamQuery },
    responses: { 101: { description: "Switching protocols" } },
  },
);
