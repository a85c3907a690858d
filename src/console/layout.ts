import { markup, raw, type SafeHtml } from '../pages/escape.js'
import type { Lang } from '../pages/i18n.js'
import type { Actor } from '../operators/service.js'
import { CONSOLE_BASE, visibleNav, type Section } from './nav.js'
import { SHELL_STRINGS, type ShellStrings } from './strings.js'
import { CONSOLE_CSS } from './styles.js'
import { csrfField } from './csrf.js'

/**
 * The frame of every console page: the document, the navigation of what the operator's role may
 * open, who is signed in with the sign-out forms, and the page's own content in `<main>`.
 */
export interface LayoutView {
  lang: Lang
  nonce: string
  title: string
  /** The signed-in operator; without one (sign-in, signed-out pages) there is no navigation. */
  operator?: Actor
  section?: Section
  body: SafeHtml
}

export function renderDocument(view: LayoutView): string {
  const t = SHELL_STRINGS[view.lang]
  return `<!doctype html>${markup`<html lang="${view.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${view.title} · ${t.console}</title>
<link rel="icon" href="data:,">
<style nonce="${view.nonce}">${raw(CONSOLE_CSS)}</style>
</head>
<body>
<a class="skip" href="#main">${t.skipToContent}</a>
${view.operator ? topBar(t, view.operator, view.section) : markup`<header class="top"><span class="brand">${t.console}</span></header>`}
<main id="main" tabindex="-1">
<h1>${view.title}</h1>
${view.body}
</main>
</body>
</html>`}`
}

function topBar(t: ShellStrings, operator: Actor, section: Section | undefined): SafeHtml {
  const items = visibleNav(operator.role).map(
    (item) =>
      markup`<li><a href="${item.href}"${item.section === section ? raw(' aria-current="page"') : ''}>${item.label(t)}</a></li>`,
  )
  const csrf = operator.csrfToken ? csrfField(operator.csrfToken) : ''
  const signOut =
    operator.via === 'session'
      ? markup`<form class="inline" method="post" action="${CONSOLE_BASE}/sign-out">${csrf}<button type="submit">${t.signOut}</button></form>
<form class="inline" method="post" action="${CONSOLE_BASE}/sign-out-everywhere">${csrf}<button type="submit">${t.signOutEverywhere}</button></form>`
      : ''
  return markup`<header class="top">
<span class="brand">${t.console}</span>
<nav aria-label="${t.mainNavigation}"><ul>${items}</ul></nav>
<div class="who"><span>${t.signedInAs} <strong>${operator.email}</strong> (${t.role}: ${operator.role})</span>${signOut}</div>
</header>`
}
