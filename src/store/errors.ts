// Errors the store raises that an operator can act on: the CLI prints their message without a
// stack trace (src/cli.ts). No imports, so the CLI can tell them apart before it loads the store.

/** A store whose repair was interrupted: it is refused until `verify --repair` runs again. */
export class PartialStoreError extends Error {}

/** A store that another live process is writing (writer-lock.ts): only one process may write a store. */
export class StoreBusyError extends Error {}
