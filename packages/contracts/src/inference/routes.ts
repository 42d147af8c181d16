import { z } from "@hono/zod-openapi";
import { type ContractRoute, defineRoute } from "../common/route.ts";
import { pathParam } from "../common/schemas.ts";

/** The providers the inference proxy knows and the model families each serves (spec "Inference"). */
export const INFERENCE_PROVIDERS = ["cloud-a", "cloud-a-alt", "cloud-b"] as const;
export type InferenceProvider = (typeof INFERENCE_PROVIDERS)[number];

export const InferenceProviderInfo = z
  .object({
    name: z.enum(INFERENCE_PROVIDERS),
    families: z.array(z.string()),
    /** Regions the caller may put in the path; empty when the route has no region. */
    regions: z.array(z.string()),
    authMode: z.enum(["sigv4", "bearer", "x-api-key", "api-key", "none"]),
    /** Where the credential comes from: the control plane's environment or a project credential. */
    credentialSource: z.enum(["installation", "project-credential", "none"]),
    credentialId: z.string().optional(),
    endpointHost: z.string(),
    usable: z.boolean(),
    /** Why it is not usable, and how to make it so. */
    reason: z.string().optional(),
  })
  .openapi("InferenceProvider");
export type InferenceProviderInfo = z.infer<typeof InferenceProviderInfo>;

export const InferenceProviderList = z
  .object({ projectId: z.string(), items: z.array(InferenceProviderInfo) })
  .openapi("InferenceProviderList");

const ProjectQuery = z.object({
  projectId: z.string().min(1).max(64).optional().openapi({ description: "The project (else from the caller)" }),
});

export const listInferenceProvidersRoute = defineRoute(
  { service: "inference", access: "llm:invoke" },
  {
    operationId: "listInferenceProviders",
    method: "get",
    path: "/v1/inference/providers",
    tags: ["Inference"],
    summary: "The configured model providers for the caller's project; never a secret",
    description:
      "Each provider with its families, regions, auth mode, where its credential comes from (the installation's environment or a project credential id), its endpoint host and whether it is usable now.",
    request: { query: ProjectQuery },
    responses: {
      200: { description: "The providers", content: { "application/json": { schema: InferenceProviderList } } },
    },
  },
);

const Region = pathParam("region", "us-east-1");
const Tail = z
  .string()
  .min(1)
  .openapi({ param: { name: "path", in: "path" }, example: "model/anthropic.claude-sonnet-4-5/invoke" });
const ProjectId = pathParam("projectId", "prj_01hzx4c7v0m3q9w2e8r5t6y1ua");

/**
 * The pass-through routes: the provider's own API below each prefix; answers are the provider's.
 * Each prefix is spelled out whole, once bare and once under a named project, so a path from a log
 * greps to its line here.
 */
const LLM_SHAPES = [
  {
    op: "CloudA",
    path: "/v1/llm/cloud-a/{region}/{path}",
    projectPath: "/v1/projects/{projectId}/llm/cloud-a/{region}/{path}",
    region: true,
    summary: "cloud-a model runtime",
    upstream:
      "the cloud-a model runtime of the region (`model/{id}/invoke`, `invoke-with-response-stream`, `converse`, `converse-stream`), signed with the provider's bearer key or SigV4",
  },
  {
    op: "CloudBFamily1",
    path: "/v1/llm/cloud-b/family-1/{path}",
    projectPath: "/v1/projects/{projectId}/llm/cloud-b/family-1/{path}",
    region: false,
    summary: "cloud-b, first family",
    upstream:
      "the cloud-b resource's messages API (`anthropic/v1/messages`, SSE when streaming), keyed with `x-api-key`",
  },
  {
    op: "CloudBFamily2",
    path: "/v1/llm/cloud-b/family-2/{path}",
    projectPath: "/v1/projects/{projectId}/llm/cloud-b/family-2/{path}",
    region: false,
    summary: "cloud-b, second family",
    upstream:
      "the cloud-b resource's OpenAI-style API (`openai/…` chat completions and embeddings, `api-version` passed through), keyed with `api-key`",
  },
  {
    op: "CloudAAltFamily1",
    path: "/v1/llm/cloud-a-alt/family-1/{region}/{path}",
    projectPath: "/v1/projects/{projectId}/llm/cloud-a-alt/family-1/{region}/{path}",
    region: true,
    summary: "cloud-a-alt, first family",
    upstream: "the cloud-a-alt endpoint's messages API (`anthropic/v1/messages`), keyed with `x-api-key`",
  },
  {
    op: "CloudAAltFamily2",
    path: "/v1/llm/cloud-a-alt/family-2/{region}/{path}",
    projectPath: "/v1/projects/{projectId}/llm/cloud-a-alt/family-2/{region}/{path}",
    region: true,
    summary: "cloud-a-alt, second family",
    upstream: "the cloud-a-alt endpoint's OpenAI-style chat API",
  },
] as const;

const passThrough = {
  200: { description: "The provider's answer, streamed as it arrives (JSON, SSE or AWS event-stream)" },
};

function llmRoutes(): ContractRoute[] {
  const out: ContractRoute[] = [];
  for (const shape of LLM_SHAPES) {
    for (const scoped of [false, true]) {
      // Model calls only: reads of what a provider stores under the shared key are not served.
      for (const method of ["post"] as const) {
        const params = z.object({
          ...(scoped ? { projectId: ProjectId } : {}),
          ...(shape.region ? { region: Region } : {}),
          path: Tail,
        });
        out.push(
          defineRoute(
            { service: "inference", access: "llm:invoke" },
            {
              operationId: `${method}Llm${shape.op}${scoped ? "InProject" : ""}`,
              method,
              path: scoped ? shape.projectPath : shape.path,
              tags: ["Inference"],
              summary: `${method.toUpperCase()} to the ${shape.summary}${scoped ? " for a named project" : ""}`,
              description: `Passes the request through to ${shape.upstream}. Our token never reaches the provider. The \`llm:invoke\` policy decision runs first, then an estimate is reserved against the organization's spending limits (429 \`spending-limit-reached\` when one is reached); the real usage is settled from the response. Bodies stream both ways; the provider's own status and body are passed back as they are. ${scoped ? "The project is named in the path." : "The project comes from the caller (a project-restricted or sandbox token, or the caller's only project); otherwise use the `/v1/projects/{projectId}/llm/…` form."}`,
              request: { params },
              responses: passThrough,
            },
          ),
        );
      }
    }
  }
  return out;
}

export const llmPassThroughRoutes: readonly ContractRoute[] = llmRoutes();
