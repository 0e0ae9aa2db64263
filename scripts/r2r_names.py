"""How r2r-e2e.sh compares a method's name in the runtime's spelling with
mkdebugelf's."""
import re


def runtime_name(s):
    """"ret [Assembly] Ns.Type[inst]::Method(params)[tier]" -> Ns.Type[inst]::Method(params)"""
    m = re.search(r'\[[^\]\s]+\] (\S*?::[^(]*\(.*\))\[[A-Za-z0-9]+\]$', s)
    return m.group(1) if m else None


def our_name(s):
    """Ns.Type[inst]::Method<args>(params)#N -> Ns.Type[inst]::Method(params):
    the runtime names a generic method's instances by its definition."""
    s = re.sub(r'#\d+$', '', s)
    i = s.find('(', s.rfind('::', 0, s.find('(') if '(' in s else len(s)))
    head, params = (s[:i], s[i:]) if i >= 0 else (s, '')
    return re.sub(r'<[^<>]*(<[^<>]*>[^<>]*)*>$', '', head) + params
