import { describe, expect, it } from 'vitest'
import { sql, toQuery } from './sql.js'

describe('the sql tag', () => {
  it('binds every interpolated value as a parameter, numbered in order', () => {
    expect(toQuery(sql`SELECT * FROM t WHERE a = ${1} AND b = ${'x'}`)).toEqual({
      text: 'SELECT * FROM t WHERE a = $1 AND b = $2',
      values: [1, 'x'],
    })
  })

  it('composes a fragment in place, numbering across the pieces', () => {
    const where = sql`a = ${1} AND ${sql`b = ${2}`}`
    expect(toQuery(sql`SELECT ${'c'} FROM t WHERE ${where} LIMIT ${3}`)).toEqual({
      text: 'SELECT $1 FROM t WHERE a = $2 AND b = $3 LIMIT $4',
      values: ['c', 1, 2, 3],
    })
  })

  it('numbers placeholders by first appearance in the text, not by when a piece was built', () => {
    const late = sql`b = ${'built first'}`
    const early = sql`a = ${'built second'}`
    expect(toQuery(sql`${early} AND ${late}`)).toEqual({
      text: 'a = $1 AND b = $2',
      values: ['built second', 'built first'],
    })
  })

  it('binds a shared parameter once, with one placeholder wherever it appears', () => {
    const now = sql.param(1_700_000_000_000)
    const set = sql`updated_at = ${now}, created_at = ${now}`
    expect(toQuery(sql`UPDATE t SET ${set}, n = ${7} WHERE at < ${now}`)).toEqual({
      text: 'UPDATE t SET updated_at = $1, created_at = $1, n = $2 WHERE at < $1',
      values: [1_700_000_000_000, 7],
    })
  })

  it('keeps two shared parameters of equal value apart, and fresh per statement', () => {
    const a = sql.param(5)
    const b = sql.param(5)
    const fragment = sql`${b} ${a} ${b}`
    expect(toQuery(fragment)).toEqual({ text: '$1 $2 $1', values: [5, 5] })
    expect(toQuery(sql`${1} ${fragment}`)).toEqual({ text: '$1 $2 $3 $2', values: [1, 5, 5] })
  })

  it('joins fragments with a separator, and an empty list to nothing', () => {
    const rows = [1, 2, 3].map((n) => sql`(${n}, ${String(n)})`)
    expect(toQuery(sql`VALUES ${sql.join(rows, sql`, `)}`)).toEqual({
      text: 'VALUES ($1, $2), ($3, $4), ($5, $6)',
      values: [1, '1', 2, '2', 3, '3'],
    })
    expect(toQuery(sql`a${sql.join([sql`x`], sql`, `)}b`)).toEqual({ text: 'axb', values: [] })
    expect(toQuery(sql`a${sql.join([], sql`, `)}b`)).toEqual({ text: 'ab', values: [] })
    expect(toQuery(sql`a${sql.empty}b`)).toEqual({ text: 'ab', values: [] })
  })

  it('makes values that look like SQL or placeholders parameters, never text', () => {
    const hostile = ["$1'); DROP TABLE t; --", '$2', "it's", '${x}']
    const { text, values } = toQuery(sql`SELECT ${hostile[0]}, ${hostile[1]}, ${hostile[2]}, ${hostile[3]}`)
    expect(text).toBe('SELECT $1, $2, $3, $4')
    expect(values).toEqual(hostile)
    // An array or an object is one parameter too.
    expect(toQuery(sql`x = ANY(${['a', 'b']})`)).toEqual({ text: 'x = ANY($1)', values: [['a', 'b']] })
  })

  it('inserts a plain identifier as text and refuses anything else', () => {
    expect(toQuery(sql`SELECT ${sql.ident('next_check_at')} FROM t`).text).toBe('SELECT next_check_at FROM t')
    for (const bad of ['', 'Name', '1a', 'a b', 'a;b', 'a"', "a'", 'a.b', 'a-b', 'ä']) {
      expect(() => sql.ident(bad)).toThrow(/not a plain SQL identifier/)
    }
  })

  it('writes a whole number into the text and refuses anything else', () => {
    expect(toQuery(sql`LIMIT ${sql.int(51)} OFFSET ${sql.int(0)}`).text).toBe('LIMIT 51 OFFSET 0')
    for (const bad of [1.5, NaN, Infinity, 2 ** 53]) expect(() => sql.int(bad)).toThrow(/not a whole number/)
  })

  it('inserts trusted raw text as it is', () => {
    expect(toQuery(sql`count(*) = ${sql.unsafeRaw('5')} AND x = ${5}`)).toEqual({
      text: 'count(*) = 5 AND x = $1',
      values: [5],
    })
  })

  it('builds the same text from the same fragment every time (fragments are not changed by use)', () => {
    const now = sql.param(1)
    const fragment = sql`a = ${now} AND b = ${2}`
    const first = toQuery(fragment)
    expect(toQuery(fragment)).toEqual(first)
  })
})
