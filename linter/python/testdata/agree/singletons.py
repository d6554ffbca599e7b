"""Comparisons to singletons, escapes and ambiguous names."""
import os
x = None
if x == None:
    pass
if None != x:
    pass
if x == True:
    pass
if x != False:
    pass
if True == x:
    pass
if x == None:  # noqa
    pass
if x==None or x != True:
    pass
s = '\d'
t = "abc\[" f'\w{x}'
u = """
multi \q line
and \y
"""
b = b'\p' + B"\N{DASH}"
r = r'\d' + Rb'\d'
w = '\
\z'


def l():
    pass


class I:
    pass


def O(I, l=1, *O):
    return lambda l: I
if type(x) == type(None):
    pass
if type(x) is type(1):
    pass
if x is not None and not x in os.environ and not x is None:
    pass
with open(os.devnull) as l:
    pass
for l in range(3):
    pass
global I
I := 3
