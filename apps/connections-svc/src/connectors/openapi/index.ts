export { type OperationFilter, pathMatches, selectOperation } from "./filter.ts";
export { defaultBaseUrl, type LoadedDescription, loadOpenApiDescription, type OpenApiDocument } from "./load.ts";
export { MAX_TOOL_NAME, sanitizeToolName } from "./names.ts";
export { type BuiltRequest, buildHttpRequest } from "./request.ts";
export type { JsonSchema } from "./schema.ts";
export {
  type ArgBinding,
  type BuildOptions,
  type BuildResult,
  buildToolsFromDocument,
  type ConnectorTool,
  type HttpOperation,
  type SkippedOperation,
} from "./tools.ts";
