import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, requireChromium } from "../src/browser.ts";
import { type LocalServer, startLocalServer } from "../src/http.ts";

const chromium = requireChromium();

describe.skipIf(!chromium.available)(`system Chromium through playwright-core${chromium.reason}`, () => {
  let server: LocalServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  beforeAll(async () => {
    server = await startLocalServer((_req, res) => {
      res.setHeader("content-type", "text/html");
      res.end(
        "<!doctype html><title>t</title><button>Press me</button><script>document.querySelector('button').onclick=()=>document.title='pressed'</script>",
      );
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("renders a local page and runs its script when a button is pressed by its accessible name", async () => {
    const page = await browser.newPage();
    await page.goto(server.url);
    await page.getByRole("button", { name: "Press me" }).click();
    expect(await page.title()).toBe("pressed");
    await page.close();
  });
});
