import { LANGS, STRINGS, type Lang, type PageStrings } from './i18n.js'

/**
 * The invoice page's client script, served as a static file (`PAGE_SCRIPT`, e.g. at
 * `/pay/assets/page.js`) so the Content-Security-Policy can allow scripts from 'self' only.
 *
 * It is progressive enhancement: the server-rendered page is complete without it. With it, the
 * page follows the page's public stream (`data-stream-url` on `<body>`), updates the status text
 * and `data-state`, hides the QR code and the invoice once they must not be paid, shows what
 * arrived when a payment was short or over, runs the countdown, and makes the copy buttons work.
 *
 * It is plain ES2017 written as text rather than compiled TypeScript, because it must run as it
 * is in every browser and must not depend on how the server was built. It only ever writes with
 * `textContent` and attributes, never as markup.
 */

/** The strings the script needs, in both languages; the page's `<html lang>` picks one. */
type ClientStrings = Pick<
  PageStrings,
  | 'day'
  | 'days'
  | 'statusAwaiting'
  | 'statusSeen'
  | 'statusSeenConfirmations'
  | 'statusPaid'
  | 'statusUnderpaid'
  | 'statusOverpaid'
  | 'statusExpired'
  | 'groupSeparator'
  | 'decimalSeparator'
  | 'vndUnit'
  | 'copied'
  | 'copyManual'
>

function clientStrings(lang: Lang): ClientStrings {
  const s = STRINGS[lang]
  return {
    day: s.day,
    days: s.days,
    statusAwaiting: s.statusAwaiting,
    statusSeen: s.statusSeen,
    statusSeenConfirmations: s.statusSeenConfirmations,
    statusPaid: s.statusPaid,
    statusUnderpaid: s.statusUnderpaid,
    statusOverpaid: s.statusOverpaid,
    statusExpired: s.statusExpired,
    groupSeparator: s.groupSeparator,
    decimalSeparator: s.decimalSeparator,
    vndUnit: s.vndUnit,
    copied: s.copied,
    copyManual: s.copyManual,
  }
}

/** JSON that is also safe inside an inline `<script>` element: no `<` can close it. */
function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}

const STRINGS_JSON = scriptSafeJson(Object.fromEntries(LANGS.map((l) => [l, clientStrings(l)])))

export const PAGE_SCRIPT = `(function () {
  'use strict';
  var STRINGS = ${STRINGS_JSON};
  var FEEDBACK_CLEAR_MS = 5000;
  var CONFIRMATIONS_MAX = 1000;
  var doc = document;
  var body = doc.body;
  if (!body || !body.hasAttribute('data-state')) return;
  var s = STRINGS[doc.documentElement.getAttribute('lang') === 'vi' ? 'vi' : 'en'];
  var STATES = ['awaiting_payment', 'seen', 'paid', 'expired'];

  function byTestId(id) { return doc.querySelector('[data-testid="' + id + '"]'); }
  var statusEl = byTestId('status');
  var statusText = byTestId('status-text');
  var countdownEl = byTestId('countdown');
  var timeLeftEl = byTestId('time-left');
  var payBlock = byTestId('pay-block');
  var arrivedLabel = byTestId('arrived-label');
  var arrivedEl = byTestId('amount-arrived');
  var kind = body.getAttribute('data-kind');
  var amountEl = byTestId('amount');
  var asked = (amountEl && amountEl.getAttribute('data-asked')) || '0';
  var feedback = byTestId('copy-feedback');

  var state = body.getAttribute('data-state');
  var expiresAt = Number(body.getAttribute('data-expires-at'));
  var serverNow = Number(body.getAttribute('data-server-now'));
  // The server's clock decides expiry; measuring the offset once corrects a wrong device clock.
  var skewMs = isFinite(serverNow) ? serverNow - Date.now() : 0;
  var timer = null;
  var source = null;

  function pad2(n) { return n < 10 ? '0' + n : String(n); }

  // Same rules as formatTimeLeft in format.ts.
  function formatTimeLeft(msLeft) {
    var total = msLeft > 0 ? Math.ceil(msLeft / 1000) : 0;
    var days = Math.floor(total / 86400);
    var hours = Math.floor((total % 86400) / 3600);
    var minutes = Math.floor((total % 3600) / 60);
    var ss = pad2(total % 60);
    if (days > 0) return days + ' ' + (days === 1 ? s.day : s.days) + ' ' + pad2(hours) + ':' + pad2(minutes) + ':' + ss;
    if (hours > 0) return hours + ':' + pad2(minutes) + ':' + ss;
    return minutes + ':' + ss;
  }

  function validConfirmations(c) {
    function count(n) { return typeof n === 'number' && n % 1 === 0 && n >= 0 && n <= CONFIRMATIONS_MAX; }
    return !!c && typeof c === 'object' && count(c.have) && count(c.need) && c.need > 0;
  }

  function validPaid(p) {
    return !!p && typeof p === 'object' && (p.outcome === 'underpaid' || p.outcome === 'overpaid') &&
      typeof p.arrived === 'string' && /^[0-9]{1,20}$/.test(p.arrived);
  }

  function groupThousands(digits) {
    var head = digits.length % 3 || 3;
    var out = digits.slice(0, head);
    for (var i = head; i < digits.length; i += 3) out += s.groupSeparator + digits.slice(i, i + 3);
    return out;
  }

  // Same text as moneyText in render.ts: integer text of sats or dong, never through a float.
  function moneyText(minor) {
    var digits = minor.replace(/^0+(?=[0-9])/, '');
    if (kind === 'vietqr') return groupThousands(digits) + ' ' + s.vndUnit;
    while (digits.length < 9) digits = '0' + digits;
    var frac = digits.slice(-8).replace(/0+$/, '');
    return groupThousands(digits.slice(0, -8)) + (frac ? s.decimalSeparator + frac : '') + ' BTC';
  }

  function statusMessage(st, c, p) {
    if (st === 'paid' && p) {
      return (p.outcome === 'underpaid' ? s.statusUnderpaid : s.statusOverpaid)
        .replace('{arrived}', moneyText(p.arrived)).replace('{asked}', moneyText(asked));
    }
    if (st === 'paid') return s.statusPaid;
    if (st === 'expired') return s.statusExpired;
    if (st === 'seen') {
      return c ? s.statusSeenConfirmations.replace('{have}', String(c.have)).replace('{need}', String(c.need)) : s.statusSeen;
    }
    return s.statusAwaiting;
  }

  function stopCountdown() {
    if (timer !== null) { clearInterval(timer); timer = null; }
  }

  function closeStream() {
    if (source) { source.close(); source = null; }
  }

  function apply(st, c, p) {
    state = st;
    body.setAttribute('data-state', st);
    if (statusEl) {
      statusEl.setAttribute('data-state', st);
      if (c) statusEl.setAttribute('data-confirmations', c.have + '/' + c.need);
      if (p) statusEl.setAttribute('data-outcome', p.outcome);
    }
    if (p && arrivedEl && arrivedLabel) {
      arrivedEl.textContent = moneyText(p.arrived);
      arrivedEl.hidden = false;
      arrivedLabel.hidden = false;
    }
    var text = statusMessage(st, c, p);
    // Rewriting identical text would make screen readers announce it again.
    if (statusText && statusText.textContent !== text) statusText.textContent = text;
    var payable = st === 'awaiting_payment';
    if (payBlock) payBlock.hidden = !payable;
    if (countdownEl) countdownEl.hidden = !payable;
    if (!payable) stopCountdown();
  }

  function tick() {
    var left = expiresAt - (Date.now() + skewMs);
    if (timeLeftEl) timeLeftEl.textContent = formatTimeLeft(left);
    // The stream stays open: only the server may still report a payment that raced the expiry.
    if (left <= 0 && state === 'awaiting_payment') apply('expired', null, null);
  }

  function onStatus(event) {
    var data;
    try { data = JSON.parse(event.data); } catch (e) { return; }
    if (!data || STATES.indexOf(data.state) < 0) return;
    apply(
      data.state,
      validConfirmations(data.confirmations) ? data.confirmations : null,
      data.state === 'paid' && validPaid(data.paid) ? data.paid : null
    );
    if (data.state === 'paid' || data.state === 'expired') closeStream();
  }

  function openStream() {
    var url = body.getAttribute('data-stream-url');
    if (!url || typeof EventSource === 'undefined') return;
    source = new EventSource(url);
    source.addEventListener('status', onStatus);
  }

  var feedbackTimer = null;
  function say(text) {
    if (!feedback) return;
    feedback.textContent = text;
    if (feedbackTimer !== null) clearTimeout(feedbackTimer);
    feedbackTimer = setTimeout(function () { feedback.textContent = ''; feedbackTimer = null; }, FEEDBACK_CLEAR_MS);
  }

  function copyBySelection(field) {
    field.focus();
    field.select();
    var ok = false;
    try { ok = doc.execCommand('copy'); } catch (e) { ok = false; }
    say(ok ? s.copied : s.copyManual);
  }

  // Each copy button names the read-only field it copies (data-copy-for); it shows only with this script.
  Array.prototype.forEach.call(doc.querySelectorAll('button[data-copy-for]'), function (button) {
    var field = doc.getElementById(button.getAttribute('data-copy-for'));
    if (!field) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      var text = field.value;
      if (navigator.clipboard && typeof navigator.clipboard.writeText === 'function' && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { say(s.copied); }, function () { copyBySelection(field); });
      } else {
        copyBySelection(field);
      }
    });
  });

  if (state === 'awaiting_payment') {
    tick();
    if (state === 'awaiting_payment') timer = setInterval(tick, 1000);
  }
  if (state !== 'paid' && state !== 'expired') openStream();
  // A page kept in the back-forward cache must not hold a connection; it reconnects on return.
  window.addEventListener('pagehide', closeStream);
  window.addEventListener('pageshow', function (event) {
    if (event.persisted && !source && state !== 'paid' && state !== 'expired') openStream();
  });
})();
`
