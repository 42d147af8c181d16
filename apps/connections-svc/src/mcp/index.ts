export { MAX_STREAM_MS, RESOURCE_METADATA_PATH, registerMcpEndpoints } from "./endpoint.ts";
export type { PlatformClients } from "./platform-tools.ts";
