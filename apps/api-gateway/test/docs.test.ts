import { describe, expect, it } from "vitest";
import { docsPage } from "../src/docs.ts";

describe("the API reference page", () => {
  const html = docsPage("/v1/openapi.json", "/docs/reference.js");
  const config = JSON.parse(/createApiReference\("#app", (\{.*\})\);/.exec(html)![1]!) as Record<string, unknown>;

  it("turns off what needs the vendor's cloud and preselects Bearer authentication", () => {
    expect(config).toMatchObject({
      url: "/v1/openapi.json",
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: "never",
      authentication: { preferredSecurityScheme: "bearerAuth" },
    });
  });

  it("links to the admin console", () => {
    expect(html).toContain('<a class="agentplane-console-link" href="/">Admin console</a>');
  });
});
