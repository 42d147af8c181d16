import { describe, expect, it } from "vitest";
import { runtimeLogger } from "../src/logger.ts";
import { RuntimeSecrets } from "../src/observability/credentials.ts";

describe("the runtime's logger", () => {
  it("writes credentials as [redacted] wherever a logged object carries them", () => {
    const lines: string[] = [];
    const logger = runtimeLogger("info", { write: (line: string) => lines.push(line) });
    logger.warn(
      {
        headers: { authorization: "Bearer s3cret-bearer", "x-api-key": "s3cret-key", cookie: "sid=s3cret-cookie" },
        token: "s3cret-token",
        subscription: { name: "ci", secret: "s3cret-webhook" },
        keep: "visible",
      },
      "a call failed",
    );
    const line = lines.join("");
    expect(line).not.toMatch(/s3cret/);
    expect(line).toContain("[redacted]");
    expect(JSON.parse(line)).toMatchObject({ keep: "visible", msg: "a call failed", name: "agent-runtime" });
  });

  it("writes the runtime's secret values as [redacted] wherever a line holds them, webhook secrets included", () => {
    const lines: string[] = [];
    const secrets = new RuntimeSecrets({ CHAT_BOT_TOKEN: "xoxb-runtime-bot-token-1" });
    let webhookSecrets: readonly string[] = [];
    secrets.add(() => webhookSecrets);
    const logger = runtimeLogger("info", { write: (line: string) => lines.push(line) }, secrets.values);
    logger.info({ token: "x" }, "nothing to hide yet: whsec-added-later-42");
    webhookSecrets = ["whsec-added-later-42", 'whsec-"quoted"-7'];
    logger.warn(
      { err: "the sender sent whsec-added-later-42 back", detail: 'and whsec-"quoted"-7' },
      "a run failed with xoxb-runtime-bot-token-1",
    );
    expect(lines[0]).toContain("whsec-added-later-42");
    expect(lines[1]).not.toContain("whsec-added-later-42");
    expect(lines[1]).not.toContain("quoted");
    expect(lines[1]).not.toContain("xoxb-runtime-bot-token-1");
    expect(JSON.parse(lines[1] as string)).toMatchObject({
      msg: "a run failed with [redacted]",
      err: "the sender sent [redacted] back",
      detail: "and [redacted]",
    });
  });
});
