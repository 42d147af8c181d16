export { RESOURCE_METADATA_PATH, registerMcpEndpoints } from "./endpoint.ts";
export type { PlatformClients } from "./platform-tools.ts";
