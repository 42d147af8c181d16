import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { useParams } from "react-router";
import { call } from "../api/client.ts";
import { useMe, useOrgRole } from "../api/hooks.ts";
import { RoleSelect } from "../components/form.tsx";
import { Button, ErrorNote, Guarded, Loading, PageTitle, Table, Td } from "../components/ui.tsx";
import { memberAllowance } from "../lib/member-guard.ts";
import { type Allowance, allows, grantableRoles, ORG_ROLES, type OrgRole } from "../lib/permissions.ts";

const PAGE = 50;
export function MembersPage() {
  const { orgId } = useParams() as { orgId: string };
  const role = useOrgRole(orgId);
  const me = useMe();
  const queryClient = useQueryClient();
  const members = useInfiniteQuery({
    queryKey: ["members", orgId],
    queryFn: ({ pageParam }) => call("listMembers", { path: { orgId }, query: { limit: PAGE, cursor: pageParam } }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor,
  });
  const changed = () => {
    void queryClient.invalidateQueries({ queryKey: ["members", orgId] });
    void queryClient.invalidateQueries({ queryKey: ["me"] });
  };
  const update = useMutation({
    mutationFn: (v: { userId: string; role: OrgRole }) =>
      call("updateMember", { path: { orgId, userId: v.userId }, body: { role: v.role } }),
    onSuccess: changed,
  });
  const remove = useMutation({
    mutationFn: (userId: string) => call("removeMember", { path: { orgId, userId } }),
    onSuccess: changed,
  });
  const rows = members.data?.pages.flatMap((p) => p.items) ?? [];
  const owners = rows.filter((m) => m.role === "owner").length;
  const manage = allows("members:manage", { ...(role ? { org: role } : {}) });
  const allowanceFor = (m: { role: OrgRole }): Allowance => memberAllowance(manage, m, owners, role);
  return (
    <>
      <PageTitle>Members</PageTitle>
      {!manage.allowed ? <p className="mb-3 text-sm">Changing roles and removing members: {manage.reason}.</p> : null}
      {members.isPending ? <Loading what="members" /> : null}
      <ErrorNote error={members.error} retry={() => void members.refetch()} />
      <ErrorNote error={update.error ?? remove.error} />
      {rows.length ? (
        <Table label="Members" headers={["Name", "Email", "Role", "Joined", ""]}>
          {rows.map((m) => {
            const allowance = allowanceFor(m);
            const name = m.displayName ?? m.email ?? m.userId;
            const choices = role ? grantableRoles(role) : ORG_ROLES;
            return (
              <tr key={m.userId}>
                <Td>
                  {name}
                  {m.userId === me.data?.id ? " (you)" : ""}
                </Td>
                <Td>{m.email ?? ""}</Td>
                <Td>
                  <Guarded allowance={allowance}>
                    {(disabled) => (
                      <RoleSelect
                        aria-label={`Role of ${name}`}
                        disabled={disabled || update.isPending}
                        roles={choices}
                        value={m.role}
                        onChange={(r) => update.mutate({ userId: m.userId, role: r })}
                      />
                    )}
                  </Guarded>
                </Td>
                <Td>{new Date(m.joinedAt).toLocaleString()}</Td>
                <Td>
                  {allowance.allowed ? (
                    <Button
                      variant="danger"
                      aria-label={`Remove ${name}`}
                      disabled={remove.isPending}
                      onClick={() => remove.mutate(m.userId)}
                    >
                      Remove
                    </Button>
                  ) : (
                    <Button variant="danger" aria-label={`Remove ${name}`} disabled title={allowance.reason}>
                      Remove
                    </Button>
                  )}
                </Td>
              </tr>
            );
          })}
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
