"""Who may come in: the OAuth server (`oauth`, `oauth_routes`, `client_metadata`,
`pending_authorizations`), the login pages (`login_page`), the status page's browser sessions
(`web_sessions`) and the rate limits on password guesses and registrations (`rate_limits`).

May import: the top's foundation and `index` (the OAuth tables live in the index file).
"""
