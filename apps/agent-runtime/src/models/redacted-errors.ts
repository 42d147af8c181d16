import { redactCredentials } from "../observability/credentials.ts";
import type { ModelClient } from "./provider.ts";

/**
 * A model client whose failures carry none of the runtime's secrets. A provider, or a proxy in
 * front of it, may quote back the key it was sent (`invalid x-api-key: sk-…`); the error's text
 * then becomes a turn's 502 problem, a streamed `error` event, and the error a failed webhook or
 * scheduled run keeps, all read over the API. The text is redacted once, where the call fails.
 */
export function redactModelErrors(client: ModelClient, secrets: () => readonly string[]): ModelClient {
  return {
    provider: client.provider,
    endpoint: client.endpoint,
    ...(client.close ? { close: () => (client.close as () => Promise<void>).call(client) } : {}),
    createMessage: async (request, options) => {
      try {
        return await client.createMessage(request, options);
      } catch (err) {
        if (err instanceof Error) {
          const values = secrets();
          err.message = redactCredentials(err.message, values);
          if (err.stack) err.stack = redactCredentials(err.stack, values);
        }
        throw err;
      }
    },
  };
}
