import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { splitStatements } from './migrate.js'

describe('splitStatements', () => {
  it('splits at semicolons that end a line and drops whole-line comments', () => {
    const sql = '-- a table\nCREATE TABLE a (x int);\n\nCREATE INDEX a_x ON a (x);  \n-- the end\n'
    expect(splitStatements(sql)).toEqual(['CREATE TABLE a (x int)', 'CREATE INDEX a_x ON a (x)'])
  })

  it('keeps a dollar-quoted function body whole, semicolons and all', () => {
    const sql = [
      'CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$',
      'BEGIN',
      '  UPDATE a SET x = x + 1;',
      '  RETURN NULL;',
      'END',
      '$$;',
      'CREATE FUNCTION g(p text) RETURNS void LANGUAGE sql AS $body$',
      '  DELETE FROM a WHERE false;',
      '$body$;',
      'SELECT 1;',
    ].join('\n')
    const parts = splitStatements(sql)
    expect(parts).toHaveLength(3)
    expect(parts[0]).toMatch(/^CREATE FUNCTION f\(\)[\s\S]*RETURN NULL;\nEND\n\$\$$/)
    expect(parts[1]).toMatch(/^CREATE FUNCTION g[\s\S]*DELETE FROM a WHERE false;\n\$body\$$/)
    expect(parts[2]).toBe('SELECT 1')
  })

  it('splits every migration of the service into statements PostgreSQL accepts one by one', () => {
    const dir = fileURLToPath(new URL('./migrations/', import.meta.url))
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
      const parts = splitStatements(readFileSync(`${dir}/${file}`, 'utf8'))
      expect(parts.length, file).toBeGreaterThan(0)
      // No statement ends inside a dollar-quoted body: every one that opens a body closes it.
      for (const part of parts)
        expect((part.match(/\$\$/g) ?? []).length % 2, `${file}: ${part.slice(0, 60)}`).toBe(0)
    }
  })
})
