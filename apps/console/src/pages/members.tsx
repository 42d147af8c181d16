import { useInfiniteQuery } from "@tanstack/react-query";
import { useParams } from "react-router";
import { call } from "../api/client.ts";
import { useOrgRole } from "../api/hooks.ts";
import { Button, ErrorNote, Loading, PageTitle, Table, Td } from "../components/ui.tsx";
import { allows } from "../lib/permissions.ts";

const PAGE = 50;

export function MembersPage() {
  const { orgId } = useParams() as { orgId: string };
  const role = useOrgRole(orgId);
  const members = useInfiniteQuery({
    queryKey: ["members", orgId],
    queryFn: ({ pageParam }) => call("listMembers", { path: { orgId }, query: { limit: PAGE, cursor: pageParam } }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor,
  });
  const rows = members.data?.pages.flatMap((p) => p.items) ?? [];
  const owners = rows.filter((m) => m.role === "owner").length;
  const manage = allows("members:manage", { ...(role ? { org: role } : {}) });
  return (
    <>
      <PageTitle>Members</PageTitle>
      {!manage.allowed ? <p className="mb-3 text-sm">Changing roles and removing members: {manage.reason}.</p> : null}
      {members.isPending ? <Loading what="members" /> : null}
      <ErrorNote error={members.error} retry={() => void members.refetch()} />
      {rows.length ? (
        <Table label="Members" headers={["Name", "Email", "Role", "Joined"]}>
          {rows.map((m) => (
            <tr key={m.userId}>
              <Td>{m.displayName ?? m.userId}</Td>
              <Td>{m.email ?? ""}</Td>
              <Td>
                {m.role}
                {m.role === "owner" && owners === 1 ? (
                  <span className="ml-2 text-xs text-slate-600 dark:text-slate-300">
                    (the last owner: cannot be removed or demoted)
                  </span>
                ) : null}
              </Td>
              <Td>{new Date(m.joinedAt).toLocaleString()}</Td>
            </tr>
          ))}
        </Table>
      ) : null}
      {members.hasNextPage ? (
        <Button className="mt-3" onClick={() => void members.fetchNextPage()}>
          Load more
        </Button>
      ) : null}
    </>
  );
}
