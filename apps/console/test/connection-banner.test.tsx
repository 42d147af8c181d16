import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ConnectionBanner, connectionLost, RetryBanner, retryFailed } from "../src/components/connection-banner.tsx";
import { ApiError } from "../src/lib/problem.ts";

function client() {
  return new QueryClient({ defaultOptions: { queries: { retry: false } } });
}

async function fail(queryClient: QueryClient, key: string, error: unknown) {
  await queryClient
    .fetchQuery({
      queryKey: [key],
      queryFn: () => {
        throw error;
      },
    })
    .catch(() => {});
}

const banner = (queryClient: QueryClient) =>
  renderToStaticMarkup(
    <QueryClientProvider client={queryClient}>
      <ConnectionBanner />
    </QueryClientProvider>,
  );

describe("the retry banner of a lost connection", () => {
  it("renders an alert with a Retry button", () => {
    const html = renderToStaticMarkup(<RetryBanner onRetry={() => {}} />);
    expect(html).toContain('role="alert"');
    expect(html).toContain("cannot be reached");
    expect(html).toMatch(/<button[^>]*>Retry<\/button>/);
    expect(renderToStaticMarkup(<RetryBanner onRetry={() => {}} retrying />)).toMatch(/disabled=""[^>]*>Retrying…/);
  });

  it("shows while a query failed for want of a connection, not for an API error", async () => {
    const queryClient = client();
    await queryClient.fetchQuery({ queryKey: ["ok"], queryFn: () => 1 });
    await fail(queryClient, "denied", new ApiError(403, { type: "https://agentplane.dev/problems/forbidden" }));
    expect(connectionLost(queryClient)).toBe(false);
    expect(banner(queryClient)).toBe("");
    await fail(queryClient, "offline", new TypeError("Failed to fetch"));
    expect(connectionLost(queryClient)).toBe(true);
    expect(banner(queryClient)).toContain('data-testid="connection-lost"');
  });

  it("Retry asks again for what failed, and the banner goes once the platform answers", async () => {
    const queryClient = client();
    let online = false;
    let calls = 0;
    const queryFn = () => {
      calls++;
      if (!online) throw new TypeError("Failed to fetch");
      return "back";
    };
    await queryClient.fetchQuery({ queryKey: ["page"], queryFn }).catch(() => {});
    expect(queryClient.getQueryState(["page"])?.status).toBe("error");
    expect(connectionLost(queryClient)).toBe(true);
    online = true;
    await retryFailed(queryClient);
    expect(calls).toBe(2);
    expect(queryClient.getQueryData(["page"])).toBe("back");
    expect(connectionLost(queryClient)).toBe(false);
    expect(banner(queryClient)).toBe("");
  });
});
