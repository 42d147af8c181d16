import { AWS_AUTHORIZATION_HEADER, type HeaderReader } from "./forward.ts";

/**
 * The AWS proxy routes (`/v1/aws-connections/{connectionId}/aws/{path}`) are called by unchanged
 * AWS SDKs and the CLI: their Authorization header is a SigV4 signature made with access key
 * `agentplane`, and the Agentplane token travels as the session token. On these routes only, the
 * token is taken from `X-Amz-Security-Token`; the SigV4 header (no secret in it) reaches
 * connections-svc as `x-agentplane-aws-authorization` for its credential scope, the token does not.
 */
export const AWS_PROXY_OPERATION = /^awsProxy/;

export function awsSessionToken(operationId: string, headers: HeaderReader): string | undefined {
  if (!AWS_PROXY_OPERATION.test(operationId)) return undefined;
  return headers.get("x-amz-security-token") ?? undefined;
}

export function awsProxyHeaders(incoming: HeaderReader, outgoing: Record<string, string>): void {
  delete outgoing["x-amz-security-token"];
  const auth = incoming.get("authorization");
  if (auth?.startsWith("AWS4-HMAC-SHA256 ")) outgoing[AWS_AUTHORIZATION_HEADER] = auth;
}

/**
 * The model pass-through routes (`/v1/llm/**`, `/v1/projects/{projectId}/llm/**`) are called by
 * unchanged provider SDKs, which send their key in their own header: Anthropic's as `x-api-key`,
 * Azure OpenAI's (and Foundry's OpenAI-style API) as `api-key`. On these routes only, an Agentplane
 * token is taken from those headers when no bearer token came, and neither header goes past the
 * gateway (the proxy adds the provider's own key).
 */
export const LLM_OPERATION = /^postLlm/;
export const LLM_KEY_HEADERS = ["x-api-key", "api-key"] as const;

export function llmKeyToken(operationId: string, headers: HeaderReader): string | undefined {
  if (!LLM_OPERATION.test(operationId)) return undefined;
  for (const name of LLM_KEY_HEADERS) {
    const value = headers.get(name)?.trim();
    if (value) return value;
  }
  return undefined;
}
