import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { call } from "../api/client.ts";
import { Button, ErrorNote, Loading, PageTitle, Table, Td } from "../components/ui.tsx";
import { browserName } from "../lib/browser-name.ts";

export function SessionsPage() {
  const queryClient = useQueryClient();
  const sessions = useQuery({
    queryKey: ["sessions"],
    queryFn: () => call("listSessions"),
  });
  const revoke = useMutation({
    mutationFn: (id: string) => call("revokeSession", { path: { sessionId: id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["sessions"] }),
  });
  return (
    <>
      <PageTitle>Your browser sessions</PageTitle>
      {sessions.isPending ? <Loading what="sessions" /> : null}
      <ErrorNote error={sessions.error ?? revoke.error} retry={() => void sessions.refetch()} />
      {sessions.data ? (
        <Table label="Sessions" headers={["Opened", "Via", "Browser", "Expires", ""]}>
          {sessions.data.items.map((s) => (
            <tr key={s.id}>
              <Td>{new Date(s.createdAt).toLocaleString()}</Td>
              <Td>{s.via}</Td>
              <Td>
                <span title={s.userAgent ?? undefined}>{browserName(s.userAgent)}</span>
              </Td>
              <Td>{new Date(s.expiresAt).toLocaleString()}</Td>
              <Td>
                {s.current ? (
                  "this session"
                ) : (
                  <Button variant="danger" onClick={() => revoke.mutate(s.id)} aria-label={`Revoke session ${s.id}`}>
                    Revoke
                  </Button>
                )}
              </Td>
            </tr>
          ))}
        </Table>
      ) : null}
    </>
  );
}
