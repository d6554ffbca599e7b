async = 42
await = 1


def f(async):
    pass


async def g():
    await h()
    x = await (y)
    z = await -y
    return await


def async_helper():
    for await in range(3):
        pass
