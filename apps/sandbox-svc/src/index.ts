export {
  createSandboxService,
  SANDBOX_SCHEMA,
  type SandboxConfig,
  type SandboxService,
  type SandboxServiceDeps,
} from "./app.ts";
export { SandboxEgressHostMapSchema, SandboxImagesJsonSchema } from "./config.ts";
export type { SandboxDriver } from "./driver/types.ts";
export { type IngressTarget, parseIngressHost } from "./ingress.ts";
