export {
  CONNECTIONS_SCHEMA,
  type ConnectionsService,
  type ConnectionsServiceDeps,
  createConnectionsService,
} from "./app.ts";
export {
  type ConnectionsConfig,
  type ConnectionsEnv,
  ConnectionsEnvSchema,
  type ConnectionsSettings,
  ConnectionsSettingsSchema,
  configFromEnv as connectionsConfigFromEnv,
  configFromSettings as connectionsConfigFromSettings,
} from "./config.ts";
export type { ConnectionsContext } from "./context.ts";
export { type ProjectSigner, TenancyProjectSigner } from "./services/project-signer.ts";
