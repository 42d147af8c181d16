export {
  CONNECTIONS_SCHEMA,
  type ConnectionsService,
  type ConnectionsServiceDeps,
  createConnectionsService,
} from "./app.ts";
export { type ConnectionsConfig, type ConnectionsEnv, ConnectionsEnvSchema, configFromEnv } from "./config.ts";
export type { ConnectionsContext } from "./context.ts";
export { type ProjectSigner, TenancyProjectSigner } from "./services/project-signer.ts";
