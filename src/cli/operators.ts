import { CliError, need, type Commands } from './args.js'
import { call, type DataList } from './client.js'

interface OperatorRow {
  id: string
  email: string
  role: string
  status: string
}

interface WithSetup {
  operator: OperatorRow
  setupSecret: string
  setupExpiresAt: number
}

/** An operator's id, given as the id or the email address (looked up in the list). */
async function operatorIdOf(who: string | undefined, usage: string): Promise<string> {
  if (!who) throw new CliError(`usage: svcpay operator ${usage}`)
  if (!who.includes('@')) return who
  const list = await call<DataList<OperatorRow>>('GET', '/admin/operators')
  const found = list.data.find((o) => o.email === who.trim().toLowerCase())
  if (!found) throw new CliError(`no operator with email ${who}`)
  return found.id
}

/** Operators (issue 19): named identities for the operator API; see docs/operators.md. */
export const operatorCommands: Commands = {
  async 'operator create'({ flags, print }) {
    const r = await call<WithSetup>('POST', '/admin/operators', {
      email: need(flags, 'email'),
      role: need(flags, 'role'),
    })
    const summary = {
      operatorId: r.operator.id,
      email: r.operator.email,
      role: r.operator.role,
      setupSecret: r.setupSecret,
      setupExpiresAt: r.setupExpiresAt,
    }
    return print(
      summary,
      [
        `operator:      ${r.operator.id}  ${r.operator.email}  (${r.operator.role})`,
        `set-up secret: ${r.setupSecret}`,
        `               shown once, valid until ${new Date(r.setupExpiresAt).toISOString()}; give it to the operator`,
        `               over a channel of its own. Set-up: docs/operators.md ("Setting up the first operator").`,
      ].join('\n'),
    )
  },

  async 'operator list'({ print }) {
    const r = await call<DataList<OperatorRow>>('GET', '/admin/operators')
    return print(
      r.data,
      r.data.map((o) => `${o.id}  ${o.role.padEnd(10)}  ${o.status.padEnd(8)}  ${o.email}`).join('\n') ||
        '(none)',
    )
  },

  async 'operator disable'({ rest, print }) {
    const operatorId = await operatorIdOf(rest[0], 'disable OPERATOR_ID|EMAIL')
    const r = await call<{ operator: OperatorRow }>(
      'POST',
      `/admin/operators/${encodeURIComponent(operatorId)}/disable`,
    )
    return print(r, `${r.operator.id} (${r.operator.email}) disabled; its sessions have ended`)
  },

  async 'operator role'({ rest, print }) {
    const role = rest[1]
    const operatorId = await operatorIdOf(rest[0], 'role OPERATOR_ID|EMAIL ROLE')
    if (!role) throw new CliError('usage: svcpay operator role OPERATOR_ID|EMAIL ROLE')
    const r = await call<{ operator: OperatorRow }>(
      'POST',
      `/admin/operators/${encodeURIComponent(operatorId)}/role`,
      { role },
    )
    return print(r, `${r.operator.id} (${r.operator.email}) is now ${r.operator.role}`)
  },

  async 'operator enable'({ rest, print }) {
    const operatorId = await operatorIdOf(rest[0], 'enable OPERATOR_ID|EMAIL')
    const r = await call<{ operator: OperatorRow }>(
      'POST',
      `/admin/operators/${encodeURIComponent(operatorId)}/enable`,
    )
    return print(
      r,
      `${r.operator.id} (${r.operator.email}) enabled: ${r.operator.status}` +
        (r.operator.status === 'pending' ? ' (it never finished its set-up: reset it for a new secret)' : ''),
    )
  },

  async 'operator reset'({ rest, print }) {
    const operatorId = await operatorIdOf(rest[0], 'reset OPERATOR_ID|EMAIL')
    const r = await call<WithSetup>('POST', `/admin/operators/${encodeURIComponent(operatorId)}/reset`)
    return print(
      {
        operatorId: r.operator.id,
        email: r.operator.email,
        setupSecret: r.setupSecret,
        setupExpiresAt: r.setupExpiresAt,
      },
      [
        `operator:      ${r.operator.id}  ${r.operator.email}: password and second factor cleared, sessions ended`,
        `set-up secret: ${r.setupSecret}`,
        `               shown once, valid until ${new Date(r.setupExpiresAt).toISOString()}; give it to the operator`,
        `               over a channel of its own, to set up a password and an authenticator again.`,
      ].join('\n'),
    )
  },

  async 'operator signout'({ rest, print }) {
    const operatorId = await operatorIdOf(rest[0], 'signout OPERATOR_ID|EMAIL')
    const r = await call<{ operatorId: string; revoked: number }>('POST', '/admin/sessions/revoke-all', {
      operatorId,
    })
    return print(r, `${r.operatorId}: ${r.revoked} session(s) ended`)
  },
}
