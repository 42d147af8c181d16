import { describe, expect, it } from "vitest";
import { TokenCache } from "../src/authn/token-cache.ts";

/**
 * A resolution still on its way when an id it names is revoked through this gateway: it answered
 * before the revocation, so it is not kept (else the revoked credential would be served from the
 * cache for its whole lifetime, though "forgotten at once").
 */
describe("a token resolving while its tag is forgotten", () => {
  it("is not cached", async () => {
    const cache = new TokenCache<{ sessionId: string; ancestors: string[] }>(60_000, 100, (v) => [
      v.sessionId,
      ...v.ancestors,
    ]);
    let answer!: (v: { sessionId: string; ancestors: string[] }) => void;
    let loads = 0;
    const load = () => {
      loads += 1;
      return new Promise<{ sessionId: string; ancestors: string[] }>((resolve) => {
        answer = resolve;
      });
    };
    const first = cache.get("cookie-c", load);
    // The parent is revoked (and forgotten) while the child's resolution is in flight.
    cache.forgetTagged("ses_parent");
    answer({ sessionId: "ses_child", ancestors: ["ses_parent"] });
    expect(await first).toEqual({ sessionId: "ses_child", ancestors: ["ses_parent"] });

    const again = cache.get("cookie-c", load);
    expect(loads).toBe(2);
    answer({ sessionId: "ses_child", ancestors: ["ses_parent"] });
    await again;
    // Nothing was forgotten meanwhile: this one is kept, and forgotten by its tags.
    await cache.get("cookie-c", load);
    expect(loads).toBe(2);
    cache.forgetTagged("ses_parent");
    void cache.get("cookie-c", load);
    expect(loads).toBe(3);
  });
});
