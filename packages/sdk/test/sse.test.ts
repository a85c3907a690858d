import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { parseSse, type SseMessage } from '@svcpay/sdk'

/** A byte stream delivering `text` in the given chunk sizes. */
function streamOf(bytes: Uint8Array, cuts: number[] = []): ReadableStream<Uint8Array> {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const chunks: Uint8Array[] = []
  let at = 0
  for (const p of [...points, bytes.length]) {
    if (p > at) chunks.push(bytes.slice(at, p))
    at = Math.max(at, p)
  }
  return new ReadableStream({
    pull(controller) {
      const next = chunks.shift()
      if (next) controller.enqueue(next)
      else controller.close()
    },
  })
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<SseMessage[]> {
  const out: SseMessage[] = []
  for await (const m of parseSse(stream)) out.push(m)
  return out
}

const wire =
  '\uFEFF: keep-alive comment\n' +
  'retry: 2500\n' +
  'event: status\n' +
  'id: 7\n' +
  'data: {"txnId":"t1","txnState":"srccreated","extRefId":"é-1","msg":"","updatedAt":1}\r\n' +
  '\r\n' +
  ':\n' +
  'event: status\r' +
  'data:{"a":1}\r' +
  'data:  two spaces\r' +
  '\r' +
  'event: ignored-without-data\n\n' +
  'data\n\n' +
  'data: unterminated at the end'

const expected: SseMessage[] = [
  {
    event: 'status',
    data: '{"txnId":"t1","txnState":"srccreated","extRefId":"é-1","msg":"","updatedAt":1}',
    id: '7',
    retry: 2500,
  },
  { event: 'status', data: '{"a":1}\n two spaces', id: '7', retry: 2500 },
  { event: 'message', data: '', id: '7', retry: 2500 },
]

describe('parseSse (the HTML event-stream format)', () => {
  it('parses fields, comments, CRLF/CR/LF line ends and multi-line data; drops an unfinished message', async () => {
    expect(await collect(streamOf(new TextEncoder().encode(wire)))).toEqual(expected)
  })

  it('gives the same messages however the bytes are split, even inside a UTF-8 character or a CRLF', async () => {
    const bytes = new TextEncoder().encode(wire)
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: bytes.length }), { maxLength: 40 }), async (cuts) => {
        expect(await collect(streamOf(bytes, cuts))).toEqual(expected)
      }),
      { numRuns: 300 },
    )
  })
})
