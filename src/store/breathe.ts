/**
 * Lets the event loop take a turn (sockets, timers, /health) before going on: between two
 * statements of a long transaction on the embedded engine, whose statements otherwise settle back
 * to back without one, and before a request's statement starts (priority.ts).
 */
export const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));
