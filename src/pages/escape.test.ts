import { describe, expect, it } from 'vitest'
import { escapeHtml, markup, raw } from './escape.js'

describe('escapeHtml', () => {
  it('escapes the five characters that matter in content and attributes', () => {
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;')
  })

  it('leaves ordinary text, Vietnamese and emoji unchanged', () => {
    expect(escapeHtml('Cà phê Sài Gòn ☕ 100%')).toBe('Cà phê Sài Gòn ☕ 100%')
  })

  it.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['"><img src=x onerror=alert(1)>', '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;'],
    ["' autofocus onfocus='alert(1)", '&#39; autofocus onfocus=&#39;alert(1)'],
    ['</textarea><script>x()</script>', '&lt;/textarea&gt;&lt;script&gt;x()&lt;/script&gt;'],
    ['&lt;already escaped&gt;', '&amp;lt;already escaped&amp;gt;'],
    ['<!--', '&lt;!--'],
  ])('makes %s inert', (hostile, expected) => {
    const out = escapeHtml(hostile)
    expect(out).toBe(expected)
    expect(out).not.toMatch(/[<>"']/)
  })
})

describe('markup template', () => {
  it('escapes every interpolation and keeps raw markup', () => {
    const name = '<b>"x"</b>'
    const out = markup`<p title="${name}">${name}${raw('<i>ok</i>')}</p>`.html
    expect(out).toBe(
      '<p title="&lt;b&gt;&quot;x&quot;&lt;/b&gt;">&lt;b&gt;&quot;x&quot;&lt;/b&gt;<i>ok</i></p>',
    )
  })

  it('nests templates without escaping them twice and drops empty values', () => {
    const inner = markup`<span>${'a&b'}</span>`
    expect(markup`<div>${inner}${null}${undefined}${false}${[inner, '<']}</div>`.html).toBe(
      '<div><span>a&amp;b</span><span>a&amp;b</span>&lt;</div>',
    )
  })

  it('writes numbers and bigints as text', () => {
    expect(markup`${12}/${3n}`.html).toBe('12/3')
  })
})
