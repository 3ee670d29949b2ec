import { Writable } from 'node:stream';
import { pino } from 'pino';

/** A logger (info and up) whose entries are pushed, parsed, to `logged`. */
export const capturedLog = <T>(logged: T[]) =>
  pino(
    { level: 'info' },
    new Writable({
      write(chunk, _enc, done) {
        logged.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
