import { type InferencePlatform, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream } from "./upstream.ts";

/** A platform whose providers (both families, every API style) are one fake upstream. */
export async function startWithUpstream(
  extra: Parameters<typeof startInferencePlatform>[1] = {},
): Promise<{ up: FakeUpstream; h: InferencePlatform; close(): Promise<void> }> {
  const up = await startFakeUpstream();
  const h = await startInferencePlatform(
    {
      cloudA: { kind: "bearer", token: CREDS.bearer },
      cloudBKey: CREDS.cloudBKey,
      cloudAEndpointUrl: up.url,
      cloudBBaseUrl: `${up.url}/anthropic/v1`,
      cloudBOpenAiBaseUrl: `${up.url}/openai/v1`,
    },
    extra,
  );
  return {
    up,
    h,
    async close() {
      await h.close();
      await up.close();
    },
  };
}
