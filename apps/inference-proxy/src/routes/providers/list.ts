import { type InferenceProviderInfo, listInferenceProvidersRoute } from "@agentplane/contracts";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { ProviderSettings } from "../../config.ts";
import type { CallerResolver } from "../../proxy/caller.ts";

const hostOf = (url: string) => new URL(url).host;

/** What `/v1/inference/providers` shows: where each provider's credential comes from, never the secret. */
export function describeProviders(p: ProviderSettings): InferenceProviderInfo[] {
  const region = p.cloudARegion;
  const cloudBBase = p.cloudBBaseUrl ?? p.cloudBOpenAiBaseUrl;
  const cloudBReady = Boolean(p.cloudBKey && (cloudBBase || p.cloudBResource));
  const source = (usable: boolean) => (usable ? ("installation" as const) : ("none" as const));
  return [
    {
      name: "cloud-a",
      families: [],
      regions: [region],
      authMode: p.cloudA ? (p.cloudA.kind === "bearer" ? "bearer" : "sigv4") : "none",
      credentialSource: source(Boolean(p.cloudA)),
      endpointHost: p.cloudAEndpointUrl ? hostOf(p.cloudAEndpointUrl) : `bedrock-runtime.${region}.amazonaws.com`,
      usable: Boolean(p.cloudA),
      ...(p.cloudA
        ? {}
        : { reason: "Set CLOUD_A_BEARER_TOKEN (or CLOUD_A_ACCESS_KEY_ID and CLOUD_A_SECRET_ACCESS_KEY)" }),
    },
    {
      name: "cloud-a-alt",
      families: ["family-1", "family-2"],
      regions: [region],
      authMode: p.cloudA?.kind === "bearer" ? "x-api-key" : "none",
      credentialSource: source(p.cloudA?.kind === "bearer"),
      endpointHost: p.cloudAAltBaseUrl ? hostOf(p.cloudAAltBaseUrl) : `bedrock-mantle.${region}.api.aws`,
      usable: p.cloudA?.kind === "bearer",
      ...(p.cloudA?.kind === "bearer" ? {} : { reason: "Set CLOUD_A_BEARER_TOKEN (its only credential)" }),
    },
    {
      name: "cloud-b",
      families: ["family-1", "family-2"],
      regions: [],
      authMode: cloudBReady ? "x-api-key" : "none",
      credentialSource: source(cloudBReady),
      endpointHost: cloudBBase
        ? hostOf(cloudBBase)
        : p.cloudBResource
          ? `${p.cloudBResource}.services.ai.azure.com`
          : "{resource}.services.ai.azure.com",
      usable: cloudBReady,
      ...(cloudBReady ? {} : { reason: "Set CLOUD_B_API_KEY and CLOUD_B_RESOURCE_NAME (or CLOUD_B_BASE_URL)" }),
    },
  ];
}

export function registerListInferenceProviders(deps: {
  app: ServiceApp;
  callers: CallerResolver;
  providers: ProviderSettings;
}): void {
  deps.app.openapi(listInferenceProvidersRoute, async (c) => {
    const { projectId } = c.req.valid("query");
    const scope = await deps.callers.resolve(requirePrincipal(c), projectId, c.get("requestId"));
    return c.json({ projectId: scope.projectId, items: describeProviders(deps.providers) }, 200);
  });
}
