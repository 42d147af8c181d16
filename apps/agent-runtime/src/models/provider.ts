// The provider SDKs are imported on the first call (several MB of heap each): a runtime that
// never calls a model never loads them. What their constructors would refuse is checked up front.
import type Anthropic from "@anthropic-ai/sdk";
import type { Message, MessageCreateParamsBase } from "@anthropic-ai/sdk/resources/messages";
import type { RuntimeConfig } from "../config.ts";

export type ModelRequest = Omit<MessageCreateParamsBase, "stream">;

/** One Messages API call, streamed: `onText` sees text as it arrives; resolves with the whole message. */
export interface ModelClient {
  readonly provider: RuntimeConfig["provider"];
  /** Where calls go, for logs and the profile: never carries a credential. */
  readonly endpoint: string;
  createMessage(
    request: ModelRequest,
    options?: { onText?: (delta: string) => void; signal?: AbortSignal },
  ): Promise<Message>;
  /** Releases what the client holds (the worker thread of WorkerModelClient). */
  close?(): Promise<void>;
}

export interface ModelClientOptions {
  /** SDK retries of a failed call (429, 5xx, connection errors). */
  maxRetries?: number;
  timeoutMs?: number;
}

let headerAuthClass: Promise<typeof Anthropic> | undefined;

/**
 * The plain Messages API client for endpoints whose auth is a header we set ourselves
 * (`x-api-key` for cloud-a-alt, the gateway bearer): it must never pick up local Anthropic
 * credentials or a base URL from profiles on disk.
 */
function headerAuthAnthropic(): Promise<typeof Anthropic> {
  headerAuthClass ??= import("@anthropic-ai/sdk").then(
    ({ default: Anthropic }) =>
      class HeaderAuthAnthropic extends Anthropic {
        protected override _shouldResolveDefaultCredentials(): boolean {
          return false;
        }
        protected override validateHeaders(): void {}
      },
  );
  return headerAuthClass;
}

const loadBedrock = async () => (await import("@anthropic-ai/bedrock-sdk")).AnthropicBedrock;

type SdkClient = { messages: Pick<Anthropic["messages"], "stream"> };

/** What `build` makes, made on the first call and shared after; a failed build is tried again. */
export function onFirstUse<T>(build: () => Promise<T>): () => Promise<T> {
  let built: Promise<T> | undefined;
  return () => {
    built ??= build().catch((err: unknown) => {
      built = undefined;
      throw err;
    });
    return built;
  };
}

/** The SDK client is built on the first call. */
function wrap(provider: RuntimeConfig["provider"], endpoint: string, build: () => Promise<SdkClient>): ModelClient {
  const client = onFirstUse(build);
  return {
    provider,
    endpoint,
    async createMessage(request, options = {}) {
      const sdk = await client();
      const stream = sdk.messages.stream(request, options.signal ? { signal: options.signal } : undefined);
      if (options.onText) stream.on("text", options.onText);
      return stream.finalMessage();
    },
  };
}

const trimSlash = (url: string) => url.replace(/\/+$/, "");

/** Route shapes of the control plane's inference proxy (spec "Inference"), below `{GATEWAY_API_URL}/v1`. */
export function gatewayBaseUrl(config: RuntimeConfig): string {
  const gateway = trimSlash(config.env.GATEWAY_API_URL ?? "");
  const region = config.env.CLOUD_A_REGION;
  switch (config.provider) {
    case "cloud-a":
      return `${gateway}/v1/llm/cloud-a/${region}`;
    case "cloud-a-alt":
      return `${gateway}/v1/llm/cloud-a-alt/family-1/${region}/anthropic`;
    case "cloud-b":
      return `${gateway}/v1/llm/cloud-b/family-1/anthropic`;
  }
}

function gatewayClient(config: RuntimeConfig, common: { maxRetries: number; timeout: number }): ModelClient {
  const baseURL = gatewayBaseUrl(config);
  const token = config.env.GATEWAY_API_TOKEN;
  if (config.provider === "cloud-a") {
    // The Bedrock client still rewrites /v1/messages into /model/{id}/invoke[-with-response-stream]
    // and decodes the event-stream framing the gateway passes through.
    return wrap(config.provider, baseURL, async () => {
      const AnthropicBedrock = await loadBedrock();
      return new AnthropicBedrock({
        ...common,
        baseURL,
        awsRegion: config.env.CLOUD_A_REGION,
        apiKey: token ?? null,
        skipAuth: token === undefined,
      });
    });
  }
  return wrap(config.provider, baseURL, async () => {
    const HeaderAuthAnthropic = await headerAuthAnthropic();
    return new HeaderAuthAnthropic({ ...common, baseURL, apiKey: null, authToken: token ?? null });
  });
}

export function cloudAAltBaseUrl(config: RuntimeConfig): string {
  return trimSlash(
    config.env.CLOUD_A_ALT_BASE_URL ?? `https://bedrock-mantle.${config.env.CLOUD_A_REGION}.api.aws/anthropic`,
  );
}

/** The Foundry SDK appends `/v1/messages`; the spec's endpoint variables name the `/anthropic/v1` level. */
export function cloudBBaseUrl(config: RuntimeConfig): string {
  const configured = config.env.CLOUD_B_BASE_URL;
  if (configured) return trimSlash(configured).replace(/\/v1$/, "");
  return `https://${config.env.CLOUD_B_RESOURCE_NAME}.services.ai.azure.com/anthropic`;
}

/** A variable of the process environment that a provider SDK's constructor would refuse. */
export interface SdkEnvironmentConflict {
  variable: string;
  message: string;
}

/** Set as the SDKs read the environment: trimmed, and blank counts as unset. */
export const setForSdk = (processEnv: Record<string, string | undefined>, name: string): boolean =>
  Boolean(processEnv[name]?.trim());

/**
 * What the chat client's SDK constructor would refuse of the process environment (which it reads
 * itself, on the first call), for a check at start. Of the constructors used here only
 * AnthropicFoundry reads a variable that can clash with the options passed: its resource
 * (`ANTHROPIC_FOUNDRY_RESOURCE`) next to the `baseURL` it is always given throws "baseURL and
 * resource are mutually exclusive". AnthropicBedrock and the header-auth client are given every
 * option they would otherwise take from the environment (region, base URL, key). The provider
 * tests hold this, and the embedder's counterpart, against the installed SDKs.
 */
export function chatEnvironmentConflicts(
  config: RuntimeConfig,
  processEnv: Record<string, string | undefined>,
): SdkEnvironmentConflict[] {
  if (config.env.GATEWAY_API_URL || config.provider !== "cloud-b") return [];
  if (!setForSdk(processEnv, "ANTHROPIC_FOUNDRY_RESOURCE")) return [];
  return [
    {
      variable: "ANTHROPIC_FOUNDRY_RESOURCE",
      message:
        "is set in the process environment, where the cloud-b chat client would refuse it next to the endpoint the runtime passes (baseURL and resource are mutually exclusive). Unset it: the runtime takes the resource from CLOUD_B_RESOURCE_NAME (or the endpoint from CLOUD_B_BASE_URL)",
    },
  ];
}

/**
 * What the SDK constructors check of the options, checked when the client is created rather than
 * on its first call: the retry count (the SDKs' own message).
 */
function checkOptions(options: ModelClientOptions): void {
  const n = options.maxRetries;
  if (n === undefined) return;
  if (typeof n !== "number" || !Number.isInteger(n)) throw new Error("maxRetries must be an integer");
  if (n < 0) throw new Error("maxRetries must be a positive integer");
}

/**
 * The provider's client for a configuration that loadConfig accepted: its endpoint is known at
 * once, its SDK is loaded and its SDK client built on the first call.
 */
export function createModelClient(config: RuntimeConfig, options: ModelClientOptions = {}): ModelClient {
  checkOptions(options);
  const common = { maxRetries: options.maxRetries ?? 2, timeout: options.timeoutMs ?? 10 * 60_000 };
  const env = config.env;
  if (env.GATEWAY_API_URL) return gatewayClient(config, common);
  switch (config.provider) {
    case "cloud-a": {
      const baseURL = trimSlash(
        env.CLOUD_A_ENDPOINT_URL ?? `https://bedrock-runtime.${env.CLOUD_A_REGION}.amazonaws.com`,
      );
      const shared = { ...common, baseURL, awsRegion: env.CLOUD_A_REGION };
      // Bearer auth is chosen automatically when the token is set (spec); otherwise SigV4.
      return wrap(config.provider, baseURL, async () => {
        const AnthropicBedrock = await loadBedrock();
        return env.CLOUD_A_BEARER_TOKEN
          ? new AnthropicBedrock({ ...shared, apiKey: env.CLOUD_A_BEARER_TOKEN })
          : new AnthropicBedrock({
              ...shared,
              apiKey: null,
              awsAccessKey: env.CLOUD_A_ACCESS_KEY_ID as string,
              awsSecretKey: env.CLOUD_A_SECRET_ACCESS_KEY as string,
              awsSessionToken: env.CLOUD_A_SESSION_TOKEN ?? null,
            });
      });
    }
    case "cloud-a-alt": {
      const baseURL = cloudAAltBaseUrl(config);
      return wrap(config.provider, baseURL, async () => {
        const HeaderAuthAnthropic = await headerAuthAnthropic();
        return new HeaderAuthAnthropic({
          ...common,
          baseURL,
          apiKey: null,
          authToken: null,
          defaultHeaders: { "x-api-key": env.CLOUD_A_BEARER_TOKEN as string },
        });
      });
    }
    case "cloud-b": {
      const baseURL = cloudBBaseUrl(config);
      // The key may be a `__managed_cred:<uuid>__` placeholder that a proxy rewrites: sent as is.
      return wrap(config.provider, baseURL, async () => {
        const { AnthropicFoundry } = await import("@anthropic-ai/foundry-sdk");
        return new AnthropicFoundry({
          ...common,
          baseURL,
          apiKey: env.CLOUD_B_API_KEY as string,
        }) as unknown as SdkClient;
      });
    }
  }
}
