import * as RadixDialog from "@radix-ui/react-dialog";
import type { ReactNode } from "react";
import { useRef } from "react";

/** A modal dialog (focus trapped, Escape closes unless `locked`), titled for screen readers. */
export function Dialog({
  open,
  onOpenChange,
  title,
  description,
  locked = false,
  side = false,
  children,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description?: string;
  /** A dialog that must not close yet (a secret not confirmed as copied). */
  locked?: boolean;
  /** A drawer on the right rather than a centred dialog. */
  side?: boolean;
  children: ReactNode;
}) {
  // Dialogs open from state, not a Radix trigger, so focus is handed back by hand on close: to the
  // control that had it when the dialog opened (the button that opened it), while it is still there.
  const opener = useRef<HTMLElement | null>(null);
  return (
    <RadixDialog.Root open={open} onOpenChange={(next) => (locked && !next ? undefined : onOpenChange(next))}>
      <RadixDialog.Portal>
        <RadixDialog.Overlay className="fixed inset-0 bg-black/40" />
        <RadixDialog.Content
          aria-describedby={undefined}
          className={
            side
              ? "fixed inset-y-0 right-0 w-full max-w-xl overflow-y-auto bg-white p-5 shadow-xl dark:bg-slate-900"
              : "fixed top-1/2 left-1/2 w-full max-w-lg -translate-x-1/2 -translate-y-1/2 rounded-lg bg-white p-5 shadow-xl dark:bg-slate-900"
          }
          onOpenAutoFocus={() => {
            opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
          }}
          onCloseAutoFocus={(e) => {
            const back = opener.current;
            opener.current = null;
            if (back?.isConnected) {
              e.preventDefault();
              back.focus();
            }
          }}
          onEscapeKeyDown={(e) => locked && e.preventDefault()}
          onPointerDownOutside={(e) => locked && e.preventDefault()}
        >
          <RadixDialog.Title className="mb-2 text-lg font-semibold">{title}</RadixDialog.Title>
          {description ? (
            <RadixDialog.Description className="mb-3 text-sm text-slate-600 dark:text-slate-300">
              {description}
            </RadixDialog.Description>
          ) : null}
          {children}
        </RadixDialog.Content>
      </RadixDialog.Portal>
    </RadixDialog.Root>
  );
}

export const DialogClose = RadixDialog.Close;
