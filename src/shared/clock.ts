/**
 * The time now by a component's injected clock, or the system's when it has none. Read through the
 * deps object each time (never copied), so that a clock or a logger swapped in later is the one used.
 */
export const nowBy = (deps: { now?: () => number }): number => (deps.now ?? Date.now)()
