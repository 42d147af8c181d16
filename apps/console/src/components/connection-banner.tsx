import { type QueryClient, useQueryClient } from "@tanstack/react-query";
import { Component, type ReactNode, useCallback, useState, useSyncExternalStore } from "react";
import { isConnectionLost } from "../lib/connection.ts";
import { Button } from "./ui.tsx";

/** The banner a lost connection shows, with the way back: retry what failed. */
export function RetryBanner({ onRetry, retrying = false }: { onRetry: () => void; retrying?: boolean }) {
  return (
    <div
      role="alert"
      data-testid="connection-lost"
      className="mb-4 flex flex-wrap items-center gap-3 rounded-md border border-amber-400 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
    >
      <span>The platform cannot be reached. What is shown may be out of date.</span>
      <Button onClick={onRetry} disabled={retrying}>
        {retrying ? "Retrying…" : "Retry"}
      </Button>
    </div>
  );
}

/** Whether the last answer of any query was a lost connection. */
export function connectionLost(queryClient: QueryClient): boolean {
  return queryClient
    .getQueryCache()
    .getAll()
    .some((q) => q.state.status === "error" && isConnectionLost(q.state.error));
}

/** Asks again for everything that failed. */
export function retryFailed(queryClient: QueryClient): Promise<void> {
  return queryClient.refetchQueries({ predicate: (q) => q.state.status === "error" });
}

/** Shown above every page while the platform does not answer; gone once it does again. */
export function ConnectionBanner() {
  const queryClient = useQueryClient();
  const [retrying, setRetrying] = useState(false);
  const subscribe = useCallback((notify: () => void) => queryClient.getQueryCache().subscribe(notify), [queryClient]);
  const lost = useSyncExternalStore(
    subscribe,
    () => connectionLost(queryClient),
    () => connectionLost(queryClient),
  );
  if (!lost) return null;
  return (
    <RetryBanner
      retrying={retrying}
      onRetry={() => {
        setRetrying(true);
        void retryFailed(queryClient).finally(() => setRetrying(false));
      }}
    />
  );
}

/**
 * A page that failed while rendering (its code could not be loaded, most often a lost connection):
 * the banner with a reload instead of a blank page; any other failure is described.
 */
export class PageErrorBoundary extends Component<{ children: ReactNode; resetKey?: string }, { error?: unknown }> {
  override state: { error?: unknown } = {};

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  override componentDidUpdate(previous: { resetKey?: string }) {
    if (this.state.error !== undefined && previous.resetKey !== this.props.resetKey)
      this.setState({ error: undefined });
  }

  override render() {
    const { error } = this.state;
    if (error === undefined) return this.props.children;
    if (isConnectionLost(error)) return <RetryBanner onRetry={() => window.location.reload()} />;
    return (
      <div role="alert" className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900">
        This page failed: {error instanceof Error ? error.message : String(error)}
        <Button className="ml-3" onClick={() => window.location.reload()}>
          Reload
        </Button>
      </div>
    );
  }
}
