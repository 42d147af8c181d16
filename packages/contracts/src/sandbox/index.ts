import type { ContractRoute } from "../common/route.ts";
import {
  k8sAttachPodRoute,
  k8sExecPodRoute,
  k8sGetApiGroupsRoute,
  k8sGetApiResourcesRoute,
  k8sGetApiVersionsRoute,
  k8sGetPodRoute,
  k8sListPodsRoute,
} from "./k8s.ts";
import { sandboxApiRoutes } from "./routes.ts";

export * from "./internal.ts";
export * from "./k8s.ts";
export * from "./routes.ts";
export * from "./schemas.ts";

export const sandboxRoutes: readonly ContractRoute[] = [
  ...sandboxApiRoutes,
  k8sGetApiVersionsRoute,
  k8sGetApiGroupsRoute,
  k8sGetApiResourcesRoute,
  k8sListPodsRoute,
  k8sGetPodRoute,
  k8sExecPodRoute,
  k8sAttachPodRoute,
];
