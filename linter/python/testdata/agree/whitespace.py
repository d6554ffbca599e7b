import os, sys
def f(a, b: int=1, *, c:int = 2, d = 3):
    return a
def g(a, b:int = 1):
    return a
x = 1
if x:
    pass
else :
    pass
y = x	+ 1
y = x +	1
y = x  + 1
y = x +  1
z = [1,	2]
z = [1,  2]
z = {1:2, 3 :4}
if	x:
    pass
y = 1	if x else 2
y = 1  if x  else 2
y = ( 1, 2 )
y = [ 1 ][ 0 ]
y = {1: 2 }
print (x)
print(x [0])
y = x[1 :2]
y = x[1: 2]
y = -1 + x*2 - x**2 + x@x + x%2 + x^2 + x<<1 + x>>1
y = x if x>1 else x<1
y=1
y =1
y= 1
y = x(a = 1, b= 2)
y = lambda: 0
z = x (1)
z = x [1]
z = not(x)
from os import(path)
y = 1 ;
y = 1; z = 2
if x: y = 2
while x: pass
for y in x: pass
try: pass
except: pass
class C: pass
def h(): pass
def k(x): return x
async def m(): await x
y = 1  # ok
y = 1 # not enough
y = 1  #no space
y = 1  #:special
y = 1  #!shebangish
#!not a shebang
#no space block
#: sphinx
## double hash
####
##
y = 1  #  two spaces
def f2(
        a,
        b):
    return (a +
            b)
y = (1 + \
     2)
y = [1, \
     # comment
     2] \
    + [3]
y = 1 + \
    2
y = x[1, :]
y = {'a': [1, 2][0:1]}
y = f'{x:>10}' + "a,b"
y = x[lambda: 0:1]
