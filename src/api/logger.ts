import pino, { type Logger } from 'pino';

/** JSON logs; anything that could carry a secret is redacted. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['authorization', '*.authorization', 'headers.authorization', 'key', '*.key', 'apiKey', '*.apiKey', 'token'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
