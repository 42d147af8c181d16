export { createRuntimeApp } from "./app.ts";
export { InProcessTeamChat, selectTeamChatDestination, type TeamChatAdapter } from "./chat/team-chat.ts";
export {
  ConfigError,
  LOCAL_OWNER_USER_ID,
  loadConfig,
  type RuntimeConfig,
  RuntimeEnvSchema,
  readEnvironment,
} from "./config.ts";
export { createModelClient, type ModelClient } from "./models/provider.ts";
export {
  checkProviderEnvironment,
  createRuntime,
  type Runtime,
  type RuntimeOptions,
  startRuntime,
} from "./runtime.ts";
export { ensureWebAssets } from "./web/build.ts";
