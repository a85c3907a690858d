import pino, { type Logger } from 'pino'

/** The process logger. Credentials never reach it: these paths are censored wherever they appear. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          'req.headers["x-api-signature"]',
          'req.headers.cookie',
          '*.apiSecret',
          '*.secret',
          '*.accessToken',
          '*.kyc',
          // Operators (issue 19): sign-in, set-up and session credentials.
          'req.headers["x-csrf-token"]',
          '*.password',
          '*.setupSecret',
          '*.totpSecret',
          '*.otpauthUri',
          '*.sessionToken',
          '*.csrfToken',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  )
}
