// The SDKs are imported on the first embedding (several MB of heap each), not at start.
import type { AnthropicBedrock } from "@anthropic-ai/bedrock-sdk";
import type { AzureOpenAI } from "openai";
import type { RuntimeConfig } from "../config.ts";
import { gatewayBaseUrl, onFirstUse, type SdkEnvironmentConflict, setForSdk } from "../models/provider.ts";

/** The memory index's vector size (spec "Limits": embedding dimension). */
export const EMBEDDING_DIMENSIONS = 1024;
/** Used when CLOUD_B_API_VERSION is unset (the Azure client has no default of its own). */
export const DEFAULT_CLOUD_B_API_VERSION = "2024-10-21";

export interface Embedder {
  /** Stored with each vector: a change re-embeds every note. */
  readonly model: string;
  embed(texts: string[]): Promise<Float32Array[]>;
}

function checked(vectors: number[][]): Float32Array[] {
  return vectors.map((v) => {
    if (!Array.isArray(v) || v.length !== EMBEDDING_DIMENSIONS) {
      throw new Error(
        `the embedding model returned ${Array.isArray(v) ? v.length : "no"} dimensions, not ${EMBEDDING_DIMENSIONS}`,
      );
    }
    return Float32Array.from(v);
  });
}

/**
 * `cloud-a` and `cloud-a-alt`: the cloud-a runtime's InvokeModel with the text-embedding model
 * (one text per call), signed like the chat calls (bearer token or SigV4) or sent to the gateway.
 */
function cloudAEmbedder(config: RuntimeConfig): Embedder {
  const env = config.env;
  const model = env.CLOUD_A_EMBEDDING_MODEL_ID;
  const common = { maxRetries: 1, timeout: 30_000, awsRegion: env.CLOUD_A_REGION };
  const client = onFirstUse(async (): Promise<AnthropicBedrock> => {
    const { AnthropicBedrock } = await import("@anthropic-ai/bedrock-sdk");
    if (env.GATEWAY_API_URL) {
      const baseURL = gatewayBaseUrl({ ...config, provider: "cloud-a" });
      const token = env.GATEWAY_API_TOKEN;
      return new AnthropicBedrock({ ...common, baseURL, apiKey: token ?? null, skipAuth: token === undefined });
    }
    const baseURL = (env.CLOUD_A_ENDPOINT_URL ?? `https://bedrock-runtime.${env.CLOUD_A_REGION}.amazonaws.com`).replace(
      /\/+$/,
      "",
    );
    return env.CLOUD_A_BEARER_TOKEN
      ? new AnthropicBedrock({ ...common, baseURL, apiKey: env.CLOUD_A_BEARER_TOKEN })
      : new AnthropicBedrock({
          ...common,
          baseURL,
          apiKey: null,
          awsAccessKey: env.CLOUD_A_ACCESS_KEY_ID as string,
          awsSecretKey: env.CLOUD_A_SECRET_ACCESS_KEY as string,
          awsSessionToken: env.CLOUD_A_SESSION_TOKEN ?? null,
        });
  });
  return {
    model,
    async embed(texts) {
      const sdk = await client();
      const out: number[][] = [];
      for (const text of texts) {
        const res = (await sdk.post(`/model/${encodeURIComponent(model)}/invoke`, {
          body: { inputText: text.slice(0, 40_000), dimensions: EMBEDDING_DIMENSIONS, normalize: true },
          // Without it the client adds `anthropic_version` to the body, which the embedding model refuses.
          headers: { "anthropic-version": null },
        })) as { embedding?: number[] };
        out.push(res.embedding ?? []);
      }
      return checked(out);
    },
  };
}

/** The Azure embeddings host of a resource; with CLOUD_B_BASE_URL, the same origin (tests, proxies). */
export function cloudBEmbeddingsEndpoint(config: RuntimeConfig): string {
  const base = config.env.CLOUD_B_BASE_URL;
  if (base) return base.replace(/\/+$/, "").replace(/\/anthropic\/v1$/, "");
  return `https://${config.env.CLOUD_B_RESOURCE_NAME}.openai.azure.com`;
}

/** `cloud-b`: the embedding deployment through the OpenAI SDK's Azure client, truncated to 1024 dimensions. */
function cloudBEmbedder(config: RuntimeConfig, deployment: string): Embedder {
  const env = config.env;
  const apiVersion = env.CLOUD_B_API_VERSION ?? DEFAULT_CLOUD_B_API_VERSION;
  const common = { apiVersion, deployment, maxRetries: 1, timeout: 30_000 };
  const client = onFirstUse(async (): Promise<AzureOpenAI> => {
    const { AzureOpenAI } = await import("openai");
    return env.GATEWAY_API_URL
      ? new AzureOpenAI({
          ...common,
          baseURL: `${env.GATEWAY_API_URL.replace(/\/+$/, "")}/v1/llm/cloud-b/family-1/openai`,
          apiKey: env.GATEWAY_API_TOKEN ?? "none",
        })
      : new AzureOpenAI({
          ...common,
          endpoint: cloudBEmbeddingsEndpoint(config),
          apiKey: env.CLOUD_B_API_KEY as string,
        });
  });
  return {
    model: deployment,
    async embed(texts) {
      const sdk = await client();
      const res = await sdk.embeddings.create({
        model: deployment,
        input: texts.map((t) => t.slice(0, 30_000)),
        dimensions: EMBEDDING_DIMENSIONS,
      });
      return checked([...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding));
    },
  };
}

/**
 * What the embedder's SDK constructor would refuse of the process environment (which it reads
 * itself, on the first embedding), for a check at start. The Azure client given an `endpoint`
 * (cloud-b without the gateway) takes its `baseURL` from `OPENAI_BASE_URL` and then throws
 * "baseURL and endpoint are mutually exclusive"; given a `baseURL` (the gateway) it reads neither
 * that nor `AZURE_OPENAI_ENDPOINT`. AnthropicBedrock (cloud-a, cloud-a-alt) is given every option
 * it would otherwise take from the environment.
 */
export function embeddingEnvironmentConflicts(
  config: RuntimeConfig,
  processEnv: Record<string, string | undefined>,
): SdkEnvironmentConflict[] {
  if (config.env.GATEWAY_API_URL || config.provider !== "cloud-b") return [];
  if (config.env.CLOUD_B_EMBEDDING_MODEL_ID.trim() === "") return [];
  if (!setForSdk(processEnv, "OPENAI_BASE_URL")) return [];
  return [
    {
      variable: "OPENAI_BASE_URL",
      message:
        "is set in the process environment, where the cloud-b embeddings client would refuse it next to the endpoint the runtime passes (baseURL and endpoint are mutually exclusive). Unset it for the runtime: the embeddings endpoint comes from CLOUD_B_RESOURCE_NAME (or CLOUD_B_BASE_URL). Or set CLOUD_B_EMBEDDING_MODEL_ID= to turn embeddings off",
    },
  ];
}

/** The active provider's embedder, or null when embeddings are off (`CLOUD_B_EMBEDDING_MODEL_ID=''`). */
export function createEmbedder(config: RuntimeConfig): Embedder | null {
  if (config.provider === "cloud-b") {
    const deployment = config.env.CLOUD_B_EMBEDDING_MODEL_ID.trim();
    return deployment === "" ? null : cloudBEmbedder(config, deployment);
  }
  return cloudAEmbedder(config);
}
