import { type InferenceProviderInfo, listInferenceProvidersRoute } from "@agentplane/contracts";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { InferenceContext } from "../../context.ts";
import type { ProjectProviders } from "../../proxy/project-credentials.ts";

const hostOf = (url: string) => new URL(url).host;

/** What `/v1/inference/providers` shows: where each provider's credential comes from, never the secret. */
export function describeProviders(project: ProjectProviders): InferenceProviderInfo[] {
  const { settings: p, cloudACredentialId, cloudBCredentialId } = project;
  const region = p.cloudARegion;
  const cloudBBase = p.cloudBBaseUrl ?? p.cloudBOpenAiBaseUrl;
  const cloudBReady = Boolean(p.cloudBKey && (cloudBBase || p.cloudBResource));
  const source = (usable: boolean, credentialId: string | undefined) =>
    !usable
      ? { credentialSource: "none" as const }
      : credentialId
        ? { credentialSource: "project-credential" as const, credentialId }
        : { credentialSource: "installation" as const };
  return [
    {
      name: "cloud-a",
      families: [],
      regions: [region],
      authMode: p.cloudA ? (p.cloudA.kind === "bearer" ? "bearer" : "sigv4") : "none",
      ...source(Boolean(p.cloudA), cloudACredentialId),
      endpointHost: p.cloudAEndpointUrl ? hostOf(p.cloudAEndpointUrl) : `bedrock-runtime.${region}.amazonaws.com`,
      usable: Boolean(p.cloudA),
      ...(p.cloudA
        ? {}
        : {
            reason:
              "Set CLOUD_A_BEARER_TOKEN (or CLOUD_A_ACCESS_KEY_ID and CLOUD_A_SECRET_ACCESS_KEY), or add a cloud-a-bearer or cloud-a-keys credential to the project",
          }),
    },
    {
      name: "cloud-a-alt",
      families: ["family-1", "family-2"],
      regions: [region],
      authMode: p.cloudA?.kind === "bearer" ? "x-api-key" : "none",
      ...source(p.cloudA?.kind === "bearer", cloudACredentialId),
      endpointHost: p.cloudAAltBaseUrl ? hostOf(p.cloudAAltBaseUrl) : `bedrock-mantle.${region}.api.aws`,
      usable: p.cloudA?.kind === "bearer",
      ...(p.cloudA?.kind === "bearer"
        ? {}
        : {
            reason: "Set CLOUD_A_BEARER_TOKEN, or add a cloud-a-bearer credential to the project (its only credential)",
          }),
    },
    {
      name: "cloud-b",
      families: ["family-1", "family-2"],
      regions: [],
      authMode: cloudBReady ? "x-api-key" : "none",
      ...source(cloudBReady, cloudBCredentialId),
      endpointHost: cloudBBase
        ? hostOf(cloudBBase)
        : p.cloudBResource
          ? `${p.cloudBResource}.services.ai.azure.com`
          : "{resource}.services.ai.azure.com",
      usable: cloudBReady,
      ...(cloudBReady
        ? {}
        : {
            reason:
              "Set CLOUD_B_API_KEY and CLOUD_B_RESOURCE_NAME (or CLOUD_B_BASE_URL), or add a cloud-b-key credential to the project",
          }),
    },
  ];
}

export function registerListInferenceProviders(app: ServiceApp, ctx: InferenceContext): void {
  app.openapi(listInferenceProvidersRoute, async (c) => {
    const { projectId } = c.req.valid("query");
    const scope = await ctx.callers.resolve(
      requirePrincipal(c),
      projectId,
      c.get("requestId"),
      "`?projectId=` (GET /v1/inference/providers?projectId=prj_…)",
    );
    const providers = await ctx.credentials.forProject(scope.projectId, c.get("requestId"));
    return c.json({ projectId: scope.projectId, items: describeProviders(providers) }, 200);
  });
}
