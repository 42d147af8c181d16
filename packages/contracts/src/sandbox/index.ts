import type { ContractRoute } from "../common/route.ts";
import * as k8s from "./k8s.ts";
import * as routes from "./routes.ts";

export * from "./internal.ts";
export * as k8sContracts from "./k8s.ts";
export { K8S_CONTAINER, K8S_PREFIX, type K8sPod, K8sPodListSchema, K8sPodSchema } from "./k8s.ts";
export * as sandboxContracts from "./routes.ts";
export * from "./schemas.ts";

export const sandboxRoutes: readonly ContractRoute[] = [
  ...Object.values(routes),
  k8s.k8sGetApiVersions,
  k8s.k8sGetApiResources,
  k8s.k8sListPods,
  k8s.k8sGetPod,
  k8s.k8sExecPod,
  k8s.k8sAttachPod,
];
