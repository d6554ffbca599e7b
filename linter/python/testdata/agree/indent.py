if True:
  x = 1
  # comment
     # comment over
if x:
pass
y = 2
    z = 3
if y:
          w = 1
for i in x:
    pass
        # odd comment
  # under comment
