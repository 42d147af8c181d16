import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { call } from "../api/client.ts";
import { Button, ErrorNote, Loading, PageTitle, Table, Td } from "../components/ui.tsx";
import { ApiError } from "../lib/problem.ts";

const PAGE = 50;

/** The installation's status; for its first owner, the records that belong to no organization. */
export default function InstallationPage() {
  const installation = useQuery({ queryKey: ["installation"], queryFn: () => call("getInstallation") });
  const trail = useInfiniteQuery({
    queryKey: ["installation-trail"],
    queryFn: ({ pageParam }) => call("listInstallationAuditTrail", { query: { limit: PAGE, cursor: pageParam } }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor,
    retry: false,
  });
  const notOwner = trail.error instanceof ApiError && trail.error.status === 403;
  const rows = trail.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <>
      <PageTitle>Installation</PageTitle>
      {installation.isPending ? <Loading what="the installation" /> : null}
      <ErrorNote error={installation.error} retry={() => void installation.refetch()} />
      {installation.data ? (
        <dl className="mb-6 grid grid-cols-[minmax(0,10rem)_minmax(0,1fr)] gap-1 text-sm">
          <dt className="font-medium">Status</dt>
          <dd data-testid="installation-status">{installation.data.status}</dd>
          <dt className="font-medium">Version</dt>
          <dd>{installation.data.version}</dd>
          <dt className="font-medium">Installation id</dt>
          <dd className="font-mono break-all">{installation.data.installationId}</dd>
          <dt className="font-medium">Activated</dt>
          <dd>
            {installation.data.activatedAt ? new Date(installation.data.activatedAt).toLocaleString() : "not yet"}
          </dd>
        </dl>
      ) : null}
      <h2 className="mb-2 text-lg font-semibold">Installation trail</h2>
      {notOwner ? (
        <p className="text-sm" role="note">
          Only the installation's first owner reads the records that belong to no organization (activation, unknown
          tokens).
        </p>
      ) : (
        <ErrorNote error={trail.error} retry={() => void trail.refetch()} />
      )}
      {trail.isPending ? <Loading what="the installation trail" /> : null}
      {rows.length ? (
        <Table label="Installation trail" headers={["Time", "Action", "Outcome", "Actor", "Request"]}>
          {rows.map((r) => (
            <tr key={r.id}>
              <Td>{new Date(r.time).toLocaleString()}</Td>
              <Td mono>{r.action}</Td>
              <Td>{r.outcome}</Td>
              <Td mono>{r.principal.displayName ?? r.principal.id ?? r.principal.type}</Td>
              <Td mono>{r.method ? `${r.method} ${r.path}` : "—"}</Td>
            </tr>
          ))}
        </Table>
      ) : trail.isSuccess ? (
        <p className="text-sm">No records outside organizations.</p>
      ) : null}
      {trail.hasNextPage ? (
        <Button className="mt-3" onClick={() => void trail.fetchNextPage()} disabled={trail.isFetchingNextPage}>
          {trail.isFetchingNextPage ? "Loading…" : "Older records"}
        </Button>
      ) : null}
    </>
  );
}
