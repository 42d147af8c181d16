import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveEventType } from "../src/webhooks/event-type.ts";
import { RAW_LIMIT, renderPrompt } from "../src/webhooks/template.ts";

const require = createRequire(import.meta.url);
const githubExamples = require("@octokit/webhooks-examples") as Array<{
  name: string;
  examples: Array<Record<string, unknown>>;
}>;
const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", name), "utf8")) as Record<string, unknown>;
const headers =
  (h: Record<string, string>) =>
  (name: string): string | undefined =>
    Object.entries(h).find(([k]) => k.toLowerCase() === name)?.[1];

describe("event type resolution with real sender payloads", () => {
  it("takes X-GitHub-Event for every GitHub example payload", () => {
    expect(githubExamples.length).toBeGreaterThan(20);
    for (const { name, examples } of githubExamples) {
      for (const payload of examples) {
        expect(resolveEventType(headers({ "X-GitHub-Event": name }), payload)).toBe(name);
      }
    }
  });

  it("takes X-Gitlab-Event for a GitLab push hook", () => {
    expect(resolveEventType(headers({ "X-Gitlab-Event": "Push Hook" }), fixture("gitlab-push.json"))).toBe("Push Hook");
  });

  it("prefers the GitHub header over the GitLab header and the payload field", () => {
    const h = headers({ "X-GitHub-Event": "push", "X-Gitlab-Event": "Push Hook" });
    expect(resolveEventType(h, { event_type: "custom" })).toBe("push");
  });

  it("reads a top-level event_type from generic senders", () => {
    expect(resolveEventType(headers({}), { event_type: "deploy.finished", id: 1 })).toBe("deploy.finished");
  });

  it("resolves Alertmanager v4 groups and PagerDuty v3 events to unknown", () => {
    expect(resolveEventType(headers({}), fixture("alertmanager-v4.json"))).toBe("unknown");
    const pagerduty = fixture("pagerduty-v3.json");
    expect((pagerduty.event as Record<string, unknown>).event_type).toBe("incident.triggered");
    expect(resolveEventType(headers({}), pagerduty)).toBe("unknown");
  });

  it("ignores a non-string event_type", () => {
    expect(resolveEventType(headers({}), { event_type: 42 })).toBe("unknown");
  });
});

describe("prompt templates", () => {
  const alert = fixture("alertmanager-v4.json");

  it("substitutes dot paths, with array indexes as segments", () => {
    expect(
      renderPrompt("{status}: {commonLabels.service} on {alerts.0.labels.instance}", alert, "unknown", "alerts"),
    ).toBe("firing: checkout on checkout-7d9f");
  });

  it("leaves unresolvable paths as written", () => {
    expect(renderPrompt("{alerts.5.labels} {nope.deeper} {status.length}", alert, "unknown", "a")).toBe(
      "{alerts.5.labels} {nope.deeper} {status.length}",
    );
  });

  it("renders non-string values as JSON", () => {
    expect(renderPrompt("{truncatedAlerts} {groupLabels} {x}", { ...alert, x: null }, "unknown", "a")).toBe(
      '0 {"alertname":"HighLatency"} null',
    );
    expect(renderPrompt("{flag} {list}", { flag: true, list: [1, "a"] }, "e", "a")).toBe('true [1,"a"]');
  });

  it("inserts {__raw__} as indented JSON truncated near 4000 characters", () => {
    const small = renderPrompt("raw: {__raw__}", { a: 1 }, "e", "n");
    expect(small).toBe('raw: {\n  "a": 1\n}');
    const big = { items: Array.from({ length: 500 }, (_, i) => ({ index: i, text: "lorem ipsum dolor" })) };
    const rendered = renderPrompt("{__raw__}", big, "e", "n");
    expect(rendered.length).toBeGreaterThan(RAW_LIMIT - 1);
    expect(rendered.length).toBeLessThan(RAW_LIMIT + 50);
    expect(rendered.startsWith('{\n  "items": [')).toBe(true);
    expect(rendered).toContain("truncated");
  });

  it("uses a lead-in naming the event and route, then the whole payload, when the prompt is empty", () => {
    const rendered = renderPrompt("  ", alert, "unknown", "prod-alerts");
    expect(rendered).toContain('"unknown"');
    expect(rendered).toContain("/agents/webhooks/prod-alerts");
    expect(rendered).toContain(JSON.stringify(alert, null, 2));
  });

  it("renders a GitHub pull_request example", () => {
    const pr = githubExamples.find((e) => e.name === "pull_request")?.examples[0] as Record<string, unknown>;
    const out = renderPrompt("PR #{number} {action} by {sender.login}", pr, "pull_request", "gh");
    expect(out).toMatch(/^PR #\d+ \w+ by \S+$/);
  });
});
