export { createInferenceService, INFERENCE_SCHEMA, type InferenceService, type InferenceServiceDeps } from "./app.ts";
export {
  type CloudACredential,
  configFromEnv,
  hasProviderCredential,
  type InferenceConfig,
  InferenceEnvSchema,
  type ProviderSettings,
} from "./config.ts";
