// A token that cannot be sent (a second line from a file, a pasted space) makes the command fail
// with an error that names the problem, not the token: stderr and --json end up in CI logs.
import { afterAll, describe, expect, it } from "vitest";
import { runInProcess, tempConfigDir } from "./harness.ts";

describe("a token with a line break", () => {
  const config = tempConfigDir();
  afterAll(() => config.remove());

  it("fails without printing the token", async () => {
    const env = {
      AGENTPLANE_CONFIG_DIR: config.dir,
      AGENTPLANE_URL: "http://127.0.0.1:9",
      AGENTPLANE_TOKEN: "apl_multi_line_secret\nsecond",
    };
    for (const argv of [
      ["orgs", "list"],
      ["orgs", "list", "--json"],
    ]) {
      const ran = await runInProcess(argv, env);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain("the token holds a character an Authorization header cannot carry");
      expect(ran.stderr + ran.stdout).not.toContain("apl_multi_line_secret");
    }
  });
});
